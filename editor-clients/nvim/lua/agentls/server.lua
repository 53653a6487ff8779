-- Starting the agentls language server and finding the running one.
local config = require('agentls.config')

local M = {}

M.name = 'agentls'

---What Neovim offers, plus what the review needs: versioned document edits (so a stale edit
---is caught) and change annotations (so the server sends one reviewable edit per hunk and
---leaves saving to us); the agentls requests we answer, among them the agent's requests for
---what the other language servers know.
---@return lsp.ClientCapabilities
local function capabilities()
  return vim.tbl_deep_extend('force', vim.lsp.protocol.make_client_capabilities(), {
    experimental = require('agentls.approval').capabilities,
    workspace = {
      workspaceEdit = {
        documentChanges = true,
        resourceOperations = { 'create', 'delete' },
        changeAnnotationSupport = { groupsOnLabel = false },
      },
    },
  }, {
    experimental = {
      agentls = vim.tbl_extend(
        'error',
        require('agentls.eyes').capabilities,
        require('agentls.elicit').capabilities
      ),
    },
  })
end

local function handlers()
  local review = require('agentls.review')
  local transcript = require('agentls.transcript')
  return vim.tbl_extend('error', require('agentls.eyes').handlers, {
    ['workspace/applyEdit'] = review.handle,
    ['agent/backgroundTask'] = function(err, params, ctx)
      require('agentls.background').changed(err, params, ctx)
    end,
    ['$/cancelRequest'] = review.withdraw,
    [require('agentls.approval').method] = require('agentls.approval').handle,
    [require('agentls.elicit').method] = require('agentls.elicit').handle,
    -- A subagent's own notifications carry its id: they go under its step, never as the
    -- task's text, steps, output or plan.
    ['agent/text'] = function(_, params)
      if params.subagent then
        return transcript.subagent_text(params.subagent, params.text)
      end
      transcript.text(params.text)
    end,
    ['agent/step'] = function(_, params)
      if params.subagent then
        return transcript.subagent_step(params)
      end
      transcript.step(params)
    end,
    ['agent/output'] = function(_, params)
      if not params.subagent then
        transcript.output(params.text)
      end
    end,
    ['agent/plan'] = function(_, params)
      if params.subagent then
        return
      end
      transcript.plan(params.items)
      require('agentls.progress').plan(params.items)
    end,
    ['agent/subagent'] = function(_, params)
      transcript.subagent(params)
    end,
  })
end

---The project root of `bufnr`: the nearest folder holding a root marker, else the file's
---own folder (never an unrelated cwd, which would put the file outside the root); the cwd
---only for a buffer without a file.
---@param bufnr integer
---@return string
function M.root_of(bufnr)
  local found = vim.fs.root(bufnr, config.options.root_markers)
  if found then
    return found
  end
  if M.is_file(bufnr) then
    return vim.fs.dirname(vim.fs.normalize(vim.api.nvim_buf_get_name(bufnr)))
  end
  return vim.fn.getcwd()
end

---Whether `bufnr` holds a file the server can be told about.
---@param bufnr integer
---@return boolean
function M.is_file(bufnr)
  return vim.bo[bufnr].buftype == '' and vim.api.nvim_buf_get_name(bufnr) ~= ''
end

---The agentls client for `bufnr`'s project, started if need be and attached to `bufnr`
---when it holds a file.
---@param bufnr integer
---@return vim.lsp.Client?
function M.client_for(bufnr)
  local attach = M.is_file(bufnr)
  local running = M.running(bufnr)
  if running and not attach then
    return running
  end
  local settings = config.settings()
  local id = vim.lsp.start({
    name = M.name,
    cmd = config.options.cmd,
    root_dir = M.root_of(bufnr),
    init_options = { agentls = settings },
    settings = { agentls = settings },
    capabilities = capabilities(),
    handlers = handlers(),
  }, { bufnr = bufnr, attach = attach })
  return id and vim.lsp.get_client_by_id(id) or nil
end

---Call `send` once the client is initialized and has opened `bufnr`: a request sent
---sooner reaches the server before the document it is about. `stopped` is called instead
---if the client stops first.
---@param client vim.lsp.Client
---@param bufnr integer
---@param send fun()
---@param stopped fun()
function M.when_ready(client, bufnr, send, stopped)
  local file = M.is_file(bufnr)
  local function try()
    if client:is_stopped() then
      stopped()
    elseif client.initialized and (not file or client.attached_buffers[bufnr]) then
      send()
    else
      vim.defer_fn(try, 10)
    end
  end
  try()
end

---The running agentls client for `bufnr`'s project, if any.
---@param bufnr integer
---@return vim.lsp.Client?
function M.running(bufnr)
  local root = M.root_of(bufnr)
  for _, client in ipairs(vim.lsp.get_clients({ name = M.name })) do
    if client.root_dir == root then
      return client
    end
  end
  return nil
end

return M
