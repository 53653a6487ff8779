-- The running task: sending agent.runTask with our own progress token, and cancelling it.
local progress = require('agentls.progress')
local selection = require('agentls.selection')
local server = require('agentls.server')
local transcript = require('agentls.transcript')

local M = {}

---@class agentls.RunningTask
---@field client_id integer
---@field token string
---@field cancelled? boolean

---@type agentls.RunningTask?
M.current = nil

local count = 0

---@param message string
---@param level? integer
function M.notify(message, level)
  vim.schedule(function()
    vim.notify('agentls: ' .. message, level or vim.log.levels.INFO)
  end)
end
local notify = M.notify

---@param err lsp.ResponseError?
---@param result agentls.TaskResult?
local function finished(err, result)
  M.current = nil
  progress.stop()
  vim.api.nvim_exec_autocmds('User', {
    pattern = 'AgentlsTaskDone',
    data = { result = result, error = err and err.message },
  })
  if err then
    transcript.failed(err.message)
    notify(err.message, vim.log.levels.ERROR)
    return
  end
  transcript.finish(result)
  local level = result.status == 'done' and vim.log.levels.INFO or vim.log.levels.WARN
  notify(('%s: %s'):format(result.status, vim.split(result.summary or '', '\n')[1]), level)
end

---The agent.runTask argument: the task, and the buffer's file and selection if it has one.
---@param task string
---@param bufnr integer
---@param range agentls.Range?
---@param client vim.lsp.Client
---@param images string[]?
---@return table
function M.arguments(task, bufnr, range, client, images)
  local args = { task = task }
  if images and #images > 0 then
    -- The server reads and checks each file (docs/protocol.md, agent.runTask's images).
    args.images = vim.tbl_map(function(path)
      return { uri = vim.uri_from_fname(path) }
    end, images)
  end
  if server.is_file(bufnr) then
    args.uri = vim.uri_from_bufnr(bufnr)
    if range then
      args.selection = selection.to_lsp(bufnr, range, client.offset_encoding)
    end
  end
  return args
end

---Send `task` to the server; the answer arrives in the transcript and a notification.
---@param task string
---@param bufnr integer
---@param range agentls.Range?
---@param images string[]? Image files the model sees with the task.
---@return boolean started
function M.start(task, bufnr, range, images)
  if M.current then
    notify('a task is already running (:AgentCancel stops it)', vim.log.levels.WARN)
    return false
  end
  local client = server.client_for(bufnr)
  if not client then
    notify('the server could not be started (:checkhealth agentls)', vim.log.levels.ERROR)
    return false
  end
  count = count + 1
  local running =
    { client_id = client.id, token = ('agentls-nvim-%d-%d'):format(vim.fn.getpid(), count) }
  M.current = running
  transcript.begin(task)
  progress.expect(running.token)
  server.when_ready(client, bufnr, function()
    if running.cancelled then
      return finished(
        nil,
        { status = 'cancelled', summary = 'Cancelled before it started.', steps = 0 }
      )
    end
    local params = {
      command = 'agent.runTask',
      arguments = { M.arguments(task, bufnr, range, client, images) },
      workDoneToken = running.token,
    }
    if not client:request('workspace/executeCommand', params, finished, bufnr) then
      return finished({ code = -32803, message = 'the server has stopped' }, nil)
    end
    transcript.open(false) -- the task as it happens, beside the code (the cursor stays)
  end, function()
    finished({ code = -32803, message = 'the server stopped before the task started' }, nil)
  end)
  return true
end

---Ask the server to cancel the running task through its progress token.
---@return boolean asked
function M.cancel()
  local running = M.current
  local client = running and vim.lsp.get_client_by_id(running.client_id)
  if not running or not client then
    notify('no task is running')
    return false
  end
  -- Before the request went out there is nothing for the server to cancel yet.
  running.cancelled = true
  client:notify('window/workDoneProgress/cancel', { token = running.token })
  return true
end

---Add `text` to the running task (agent.steer): the model reads it at its next step.
---@param text string
---@return boolean sent Whether a task was running to send it to.
function M.steer(text)
  local running = M.current
  local client = running and vim.lsp.get_client_by_id(running.client_id)
  if not running or not client then
    notify('no task is running', vim.log.levels.WARN)
    return false
  end
  local params = { command = 'agent.steer', arguments = { { text = text } } }
  client:request('workspace/executeCommand', params, function(err)
    if err then
      notify(err.message, vim.log.levels.WARN)
    else
      transcript.added(text)
      notify('added to the running task')
    end
  end)
  return true
end

---Start a new conversation: the next task does not see the earlier ones.
---@param bufnr integer
function M.new_session(bufnr)
  local client = server.running(bufnr)
  if not client then
    notify('new session (no server was running)')
    return
  end
  local params = { command = 'agent.newSession', arguments = {} }
  client:request('workspace/executeCommand', params, function(err)
    if err then
      notify(err.message, vim.log.levels.WARN)
    else
      transcript.note('New session.')
      notify('new session')
    end
  end, bufnr)
end

return M
