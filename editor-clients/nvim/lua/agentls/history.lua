-- What the server keeps of a project: its checkpoints (:AgentUndo) and its saved sessions
-- (:AgentResume). The decisions (what to restore, what is a conflict) are the server's;
-- this module asks, shows and passes the user's answers on.
local server = require('agentls.server')
local transcript = require('agentls.transcript')
local notify = require('agentls.task').notify

local M = {}

---@param pattern string
---@param data table
local function fire(pattern, data)
  vim.api.nvim_exec_autocmds('User', { pattern = pattern, data = data })
end

---Send `command` (with `argument`, if any) to the project's server, started if need be.
---@param bufnr integer
---@param command string
---@param argument table?
---@param done fun(result: any)
local function call(bufnr, command, argument, done)
  bufnr = bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr
  local client = server.client_for(bufnr)
  if not client then
    notify('the server could not be started (:checkhealth agentls)', vim.log.levels.ERROR)
    return
  end
  server.when_ready(client, bufnr, function()
    local params = { command = command, arguments = argument and { argument } or {} }
    client:request('workspace/executeCommand', params, function(err, result)
      if err then
        notify(err.message, vim.log.levels.WARN)
        fire('AgentlsCommandFailed', { command = command, error = err.message })
      else
        done(result)
      end
    end, bufnr)
  end, function()
    notify('the server stopped', vim.log.levels.ERROR)
  end)
end

M.call = call -- the background tasks' commands go the same way

---@param paths string[]
---@return string
local function listed(paths)
  return #paths > 0 and table.concat(paths, ', ') or 'none'
end

---@param bufnr integer
---@param result agentls.UndoResult
local function undone(bufnr, result)
  transcript.note(('Undo to checkpoint %d: %s'):format(result.checkpoint, result.outcome))
  vim.cmd.checktime() -- buffers of files written on disk reload
  fire('AgentlsUndoDone', { result = result })
  if #result.conflicts == 0 then
    notify(result.outcome) -- the server's words, as every door shows them
    return
  end
  vim.ui.select({ 'Keep them as they are', 'Overwrite them' }, {
    prompt = ('agentls: changed since the checkpoint: %s'):format(listed(result.conflicts)),
  }, function(choice)
    if choice == 'Overwrite them' then
      M.undo(bufnr, result.checkpoint, result.conflicts)
    end
  end)
end

---Undo the agent's changes back to checkpoint `id` (default: before the last task). Files
---the user changed since are conflicts: the user is asked whether to overwrite them.
---@param bufnr integer
---@param id integer?
---@param overwrite string[]?
function M.undo(bufnr, id, overwrite)
  -- An empty Lua table would go out as a JSON array: no argument at all instead.
  local argument = (id or overwrite) and { id = id, overwrite = overwrite } or nil
  call(bufnr, 'agent.undo', argument, function(result)
    undone(bufnr, result)
  end)
end

---@param time number seconds since the epoch
---@return string
local function when(time)
  return os.date('%Y-%m-%d %H:%M', math.floor(time)) --[[@as string]]
end

---Pick a checkpoint (newest first) and undo to it.
---@param bufnr integer
function M.pick_checkpoint(bufnr)
  call(bufnr, 'agent.checkpoints', nil, function(checkpoints)
    if #checkpoints == 0 then
      notify('no checkpoints yet')
      return
    end
    vim.ui.select(checkpoints, {
      prompt = 'agentls: undo to the checkpoint',
      format_item = function(item)
        return ('%s  %s'):format(when(item.time), item.description)
      end,
    }, function(item)
      if item then
        M.undo(bufnr, item.id)
      end
    end)
  end)
end

---@param bufnr integer
---@param id string
local function resume(bufnr, id)
  call(bufnr, 'agent.resumeSession', { id = id }, function(result)
    transcript.note(('Resumed %s.'):format(result.description))
    notify(('resumed "%s"'):format(result.title))
    fire('AgentlsSessionResumed', { session = result })
  end)
end

---Resume a saved session: `id`, or one picked from the project's sessions (newest first).
---@param bufnr integer
---@param id string?
function M.resume(bufnr, id)
  if id then
    return resume(bufnr, id)
  end
  call(bufnr, 'agent.sessions', nil, function(sessions)
    if #sessions == 0 then
      notify('no saved sessions for this project')
      return
    end
    vim.ui.select(sessions, {
      prompt = 'agentls: resume the session',
      format_item = function(item)
        local mark = item.current and ' (current)' or ''
        return ('%s  %s%s'):format(when(item.updated), item.description, mark)
      end,
    }, function(item)
      if item then
        resume(bufnr, item.id)
      end
    end)
  end)
end

return M
