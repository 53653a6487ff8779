-- workspace/applyEdit from agentls: each edit is reviewed hunk by hunk (or applied at once
-- with review = "none"), the accepted hunks applied, the changed buffers written, and the
-- answer says truthfully whether anything landed.
local config = require('agentls.config')
local review_view = require('agentls.review_view')
local workspace_edit = require('agentls.workspace_edit')

local M = {}

---@type agentls.ReviewView?
local active = nil

---@param ns integer
---@return number
local function ms(ns)
  return ns / 1e6
end

---The buffer of `file`, loaded (and so read from disk) if it was not.
---@param file agentls.FileEdit
---@return integer
local function buffer_for(file)
  local bufnr = vim.uri_to_bufnr(file.uri)
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    vim.fn.bufload(bufnr)
  end
  return bufnr
end

---Why the edits of `file` no longer fit its buffer, if they do not.
---@param file agentls.FileEdit
---@return string?
local function stale(file)
  local bufnr = file.bufnr
  local name = workspace_edit.name(file.uri)
  if file.version ~= nil then
    local current = vim.lsp.util.buf_versions[bufnr]
    if current ~= file.version then
      return ('%s changed in the editor since the edit was proposed'):format(name)
    end
  elseif vim.bo[bufnr].modified then
    -- The server proposed against the disk, which the unsaved text no longer matches.
    return ('%s has unsaved changes in the editor'):format(name)
  end
  return nil
end

---Let the user decide on the file's hunks in a review tab.
---@param file agentls.FileEdit
---@param label string
---@param encoding string
---@param timings table
---@return boolean withdrawn
local function review(file, label, encoding, timings)
  local co = coroutine.running()
  active = review_view.open(file, label, encoding, function(decisions)
    timings.decided = vim.uv.hrtime()
    vim.schedule(function()
      coroutine.resume(co, decisions)
    end)
  end)
  vim.cmd.redraw()
  timings.shown = vim.uv.hrtime()
  vim.api.nvim_exec_autocmds('User', {
    pattern = 'AgentlsReviewOpen',
    data = { label = label, bufnr = file.bufnr, hunks = #file.edits },
  })
  file.decisions = coroutine.yield()
  active = nil
  return file.decisions == nil
end

---Apply the accepted hunks of `file` and write its buffer.
---@param file agentls.FileEdit
---@param encoding string
---@return integer accepted
local function apply(file, encoding)
  local kept = {}
  for i, edit in ipairs(file.edits) do
    if file.decisions[i] then
      table.insert(kept, edit)
    end
  end
  if #kept == 0 then
    return 0
  end
  workspace_edit.apply(kept, file.bufnr, encoding)
  local path = vim.uri_to_fname(file.uri)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
  local ok, err = pcall(vim.api.nvim_buf_call, file.bufnr, function()
    vim.cmd('silent keepalt update')
  end)
  if not ok then
    vim.notify(('agentls: could not write %s: %s'):format(path, err), vim.log.levels.ERROR)
  end
  return #kept
end

---@param file agentls.FileEdit
---@param encoding string
---@return lsp.ApplyWorkspaceEditResult
local function conclude(file, encoding)
  local problem = stale(file)
  if problem then
    return { applied = false, failureReason = problem }
  end
  -- What landed, the model and the user are told by the server (agent/step's detail).
  if apply(file, encoding) == 0 then
    return { applied = false } -- the user's no: the server words it
  end
  return { applied = true }
end

---The file an edit that only deletes one file deletes (a background task's deletion put to
---review, an undo of a file the agent made), else nil.
---@param edit lsp.WorkspaceEdit
---@return string? uri
local function only_deletion(edit)
  local changes = edit.documentChanges or {}
  if #changes == 1 and changes[1].kind == 'delete' then
    return changes[1].uri
  end
  return nil
end

---A deletion is put as a question (with `review = "none"`, done at once): there is no diff
---to review. The file's buffers are wiped, then the file removed.
---@param uri string
---@param label string
---@return lsp.ApplyWorkspaceEditResult
local function delete(uri, label)
  local path = vim.uri_to_fname(uri)
  local co, is_main = coroutine.running()
  if config.options.review ~= 'none' then
    if not co or is_main then
      return { applied = false, failureReason = 'this Neovim cannot wait for an answer' }
    end
    vim.ui.select({ 'Delete', 'Keep' }, {
      prompt = ('%s: delete %s?'):format(label, vim.fn.fnamemodify(path, ':~:.')),
      kind = 'agentls.delete',
    }, function(choice)
      vim.schedule(function() -- a synchronous vim.ui.select calls back before the yield
        coroutine.resume(co, choice)
      end)
    end)
    if coroutine.yield() ~= 'Delete' then
      return { applied = false }
    end
  end
  local bufnr = vim.fn.bufnr(path)
  if bufnr ~= -1 then
    vim.api.nvim_buf_delete(bufnr, { force = true })
  end
  local ok, problem = os.remove(path)
  if not ok and vim.uv.fs_stat(path) then
    return { applied = false, failureReason = problem }
  end
  return { applied = true }
end

---The workspace/applyEdit handler (set per client). It runs in a coroutine and yields
---while the user reviews.
---@param params lsp.ApplyWorkspaceEditParams
---@param ctx lsp.HandlerContext
---@return lsp.ApplyWorkspaceEditResult
function M.handle(_, params, ctx)
  local timings = { arrived = vim.uv.hrtime() }
  local deleted = only_deletion(params.edit)
  if deleted then
    return delete(deleted, params.label or 'agentls')
  end
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local file, unsupported = workspace_edit.file(params.edit)
  local co, is_main = coroutine.running()
  if not file or not client then
    return { applied = false, failureReason = unsupported or 'the client has stopped' }
  end
  if config.options.review ~= 'none' and (not co or is_main) then
    return { applied = false, failureReason = 'this Neovim cannot wait for a review' }
  end
  file.bufnr = buffer_for(file)
  local problem = stale(file)
  if problem then
    return { applied = false, failureReason = problem }
  end
  local label = params.label or 'agentls edit'
  if config.options.review == 'none' then
    file.decisions = vim.tbl_map(function()
      return true
    end, file.edits)
  elseif review(file, label, client.offset_encoding, timings) then
    return { applied = false, failureReason = 'the edit was withdrawn' }
  end
  local answer = conclude(file, client.offset_encoding)
  local answered = vim.uv.hrtime()
  vim.api.nvim_exec_autocmds('User', {
    pattern = 'AgentlsReviewDone',
    data = {
      label = label,
      applied = answer.applied,
      failure_reason = answer.failureReason,
      show_ms = timings.shown and ms(timings.shown - timings.arrived),
      answer_ms = ms(answered - (timings.decided or timings.arrived)),
    },
  })
  return answer
end

---$/cancelRequest from the server: it withdrew the edit under review (the task was
---cancelled), so the review closes and nothing is changed.
---@param params { id: integer|string }
function M.withdraw(_, params)
  if active and type(params.id) == 'string' and vim.startswith(params.id, 'agentls-edit-') then
    active:withdraw()
  end
end

return M
