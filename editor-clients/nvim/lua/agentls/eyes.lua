-- The editor's eyes for the agent: the diagnostics, definitions, references and symbols of
-- the other language servers, answered to agentls's requests agent/diagnostics,
-- agent/definition, agent/references and agent/symbols (docs/protocol.md). Each handler
-- runs in the coroutine Neovim gives a server request, and yields while it waits.
local M = {}

---What the client advertises in capabilities.experimental.agentls.
M.capabilities = { diagnostics = true, definition = true, references = true, symbols = true }

local server_name = 'agentls'

---The language servers other than agentls attached to `bufnr` (all of them when nil).
---@param bufnr integer?
---@return vim.lsp.Client[]
local function others(bufnr)
  return vim.tbl_filter(function(client)
    return client.name ~= server_name
  end, vim.lsp.get_clients({ bufnr = bufnr }))
end

---Whether `bufnr`'s diagnostics are as new as its text, or no server would give any.
---@param bufnr integer
---@return boolean
local function settled(bufnr)
  -- plugin/agentls.lua notes the changedtick at each DiagnosticChanged.
  return #others(bufnr) == 0 or vim.b[bufnr].agentls_diagnosed == vim.b[bufnr].changedtick
end

---Yield the running coroutine until `ready()` or `ms` have passed.
---@param ready fun(): boolean
---@param ms integer
local function wait(ready, ms)
  if ready() then
    return
  end
  local co = coroutine.running()
  local deadline = vim.uv.now() + ms
  local timer = assert(vim.uv.new_timer())
  timer:start(
    10,
    10,
    vim.schedule_wrap(function()
      if not timer:is_closing() and (ready() or vim.uv.now() >= deadline) then
        timer:stop()
        timer:close()
        coroutine.resume(co)
      end
    end)
  )
  coroutine.yield()
end

---A vim.diagnostic item as the LSP Diagnostic its server sent (or a close copy).
---@param item vim.Diagnostic
---@return lsp.Diagnostic
local function as_lsp(item)
  local original = item.user_data and item.user_data.lsp
  if type(original) == 'table' and original.range then
    return original
  end
  return {
    range = {
      start = { line = item.lnum, character = item.col },
      ['end'] = { line = item.end_lnum or item.lnum, character = item.end_col or item.col },
    },
    severity = item.severity,
    message = item.message,
    source = item.source,
  }
end

---agent/diagnostics {uris, settleMs}: the diagnostics of those files (none named: of every
---buffer that has some), once their servers have caught up with the latest change, or after
---settleMs (the server's figure, so every client waits alike).
function M.diagnostics(_, params)
  local buffers = {}
  if #(params.uris or {}) == 0 then
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr) and vim.b[bufnr].agentls_diagnosed then
        table.insert(buffers, bufnr)
      end
    end
  else
    for _, uri in ipairs(params.uris) do
      local bufnr = vim.uri_to_bufnr(uri)
      if vim.api.nvim_buf_is_loaded(bufnr) then
        table.insert(buffers, bufnr)
      end
    end
  end
  wait(function()
    return vim.iter(buffers):all(settled)
  end, params.settleMs or 0)
  local items = {}
  for _, bufnr in ipairs(buffers) do
    table.insert(items, {
      uri = vim.uri_from_bufnr(bufnr),
      diagnostics = vim.tbl_map(as_lsp, vim.diagnostic.get(bufnr)),
    })
  end
  return { items = items }
end

---The buffer of `uri`, loaded, with its filetype set so that servers enabled for it attach.
---@param uri string
---@return integer
local function loaded(uri)
  local bufnr = vim.uri_to_bufnr(uri)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    vim.fn.bufload(bufnr)
    vim.api.nvim_buf_call(bufnr, function()
      vim.cmd('filetype detect')
    end)
  end
  return bufnr
end

---Send `method` to every other server of `bufnr` that supports it; their results, once all
---have answered or `ms` have passed.
---@param bufnr integer?
---@param method string
---@param params fun(client: vim.lsp.Client): table
---@param ms integer
---@return any[]
local function ask_all(bufnr, method, params, ms)
  local asked, results = 0, {}
  local answered = 0
  for _, client in ipairs(others(bufnr)) do
    if client:supports_method(method) then
      asked = asked + 1
      client:request(method, params(client), function(err, result)
        answered = answered + 1
        if not err and result ~= nil then
          table.insert(results, result)
        end
      end, bufnr)
    end
  end
  wait(function()
    return answered == asked
  end, ms)
  return results
end

---Locations, LocationLinks, or one Location, as a list of Locations.
---@param results any[]
---@return lsp.Location[]
local function locations(results)
  local found = {}
  for _, result in ipairs(results) do
    for _, item in ipairs(vim.islist(result) and result or { result }) do
      if item.targetUri then
        table.insert(found, { uri = item.targetUri, range = item.targetSelectionRange })
      elseif item.uri then
        table.insert(found, { uri = item.uri, range = item.range })
      end
    end
  end
  return found
end

---The params of a position request to `client`, the position converted from agentls's
---encoding to the client's.
---@param ctx lsp.HandlerContext
---@param params table
---@param bufnr integer
---@return fun(client: vim.lsp.Client): table
local function at_position(ctx, params, bufnr)
  local ours = vim.lsp.get_client_by_id(ctx.client_id)
  local line = vim.api.nvim_buf_get_lines(
    bufnr,
    params.position.line,
    params.position.line + 1,
    false
  )[1] or ''
  local byte = vim.str_byteindex(
    line,
    ours and ours.offset_encoding or 'utf-16',
    params.position.character,
    false
  )
  return function(client)
    return {
      textDocument = { uri = params.textDocument.uri },
      position = {
        line = params.position.line,
        character = vim.str_utfindex(line, client.offset_encoding, byte, false),
      },
      context = { includeDeclaration = true },
    }
  end
end

---@param method string
local function navigate(method)
  return function(_, params, ctx)
    local bufnr = loaded(params.textDocument.uri)
    local ms = params.settleMs or 0
    wait(function()
      return #others(bufnr) > 0
    end, ms)
    return { locations = locations(ask_all(bufnr, method, at_position(ctx, params, bufnr), ms)) }
  end
end

---agent/definition {textDocument, position, settleMs}: {locations}.
M.definition = navigate('textDocument/definition')
---agent/references {textDocument, position, settleMs}: {locations}.
M.references = navigate('textDocument/references')

---agent/symbols {query, settleMs}: {symbols}, from every other server that has workspace
---symbols.
function M.symbols(_, params)
  local symbols = {}
  for _, result in
    ipairs(ask_all(nil, 'workspace/symbol', function()
      return { query = params.query }
    end, params.settleMs or 0))
  do
    for _, symbol in ipairs(result) do
      local location = symbol.location or {}
      if location.uri then
        table.insert(symbols, {
          name = symbol.name,
          kind = symbol.kind,
          location = {
            uri = location.uri,
            range = location.range or { start = { line = 0, character = 0 } },
          },
        })
      end
    end
  end
  return { symbols = symbols }
end

---The handlers, by method.
M.handlers = {
  ['agent/diagnostics'] = M.diagnostics,
  ['agent/definition'] = M.definition,
  ['agent/references'] = M.references,
  ['agent/symbols'] = M.symbols,
}

return M
