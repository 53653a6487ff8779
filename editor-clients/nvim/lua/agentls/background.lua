-- Background tasks (:Agent!, :AgentBackground, :AgentTasks): a task started in a worktree and
-- a process of its own while you keep editing; listed with vim.ui.select, then reviewed hunk
-- by hunk like any edit, cancelled, or discarded. The server keeps them (they outlive Neovim).
local history = require('agentls.history')
local server = require('agentls.server')
local task = require('agentls.task')
local transcript = require('agentls.transcript')
local notify = task.notify

local M = {}

---@class agentls.BackgroundTask
---@field id string
---@field task string
---@field title string
---@field status string queued|running|done|failed|error|timeout|cancelled
---@field steps integer
---@field tokens integer
---@field cost number?
---@field branch string
---@field error string?
---@field reviewed boolean
---@field files string[]
---@field log string

---@param pattern string
---@param data table
local function fire(pattern, data)
  vim.api.nvim_exec_autocmds('User', { pattern = pattern, data = data })
end

---Start `text` in the background (asked for when empty), with the buffer's file and range.
---@param text string?
---@param opts? agentls.RunOpts
function M.start(text, opts)
  opts = opts or {}
  local bufnr = (opts.bufnr == nil or opts.bufnr == 0) and vim.api.nvim_get_current_buf()
    or opts.bufnr
  ---@cast bufnr integer
  local function send(words)
    local client = server.client_for(bufnr)
    local argument = client and task.arguments(words, bufnr, opts.range, client) or { task = words }
    history.call(bufnr, 'agent.runInBackground', argument, function(started)
      notify(('running in the background on %s (:AgentTasks)'):format(started.branch))
      fire('AgentlsBackgroundStarted', { task = started })
    end)
  end
  if text and text ~= '' then
    return send(text)
  end
  vim.ui.input({ prompt = 'agentls background task: ' }, function(input)
    if input and input ~= '' then
      send(input)
    end
  end)
end

---One line of the list: `done · 5 steps · $0.0123  Add a --json flag`.
---@param item agentls.BackgroundTask
---@return string
function M.describe(item)
  local parts = { item.reviewed and 'reviewed' or item.status }
  if item.steps > 0 then
    parts[#parts + 1] = ('%d step%s'):format(item.steps, item.steps == 1 and '' or 's')
  end
  if item.cost ~= nil and item.cost ~= vim.NIL then
    parts[#parts + 1] = ('$%.4f'):format(item.cost)
  end
  return ('%s  %s'):format(table.concat(parts, ' · '), item.title)
end

---The actions a task offers now.
---@param item agentls.BackgroundTask
---@return string[]
function M.actions(item)
  local running = item.status == 'queued' or item.status == 'running'
  local actions = {}
  if not running and not item.reviewed and #item.files > 0 then
    actions[#actions + 1] = 'Review'
  end
  actions[#actions + 1] = 'Open Log'
  if running then
    actions[#actions + 1] = 'Cancel'
  end
  actions[#actions + 1] = 'Discard'
  return actions
end

---@param result { files: { hunks: integer, accepted: integer }[], conflicts: string[], binary: string[] }
---@return string
local function outcome(result)
  local accepted, total = 0, 0
  for _, file in ipairs(result.files) do
    accepted, total = accepted + file.accepted, total + file.hunks
  end
  local words = ('%d of %d changes applied'):format(accepted, total)
  if #result.conflicts > 0 then
    words = words
      .. '; not applied (you changed those lines): '
      .. table.concat(result.conflicts, '; ')
  end
  if #result.binary > 0 then
    words = words .. '; binary files left on the branch: ' .. table.concat(result.binary, ', ')
  end
  return words
end

---The task's transcript, in the server's words (`agent.backgroundTaskLog`), in a scratch
---buffer `agentls://log/<id>` in a split.
---@param bufnr integer
---@param id string
local function open_log(bufnr, id)
  history.call(bufnr, 'agent.backgroundTaskLog', { id = id }, function(result)
    local name = 'agentls://log/' .. id
    local log = vim.fn.bufnr(name)
    if log == -1 then
      log = vim.api.nvim_create_buf(true, true)
      vim.api.nvim_buf_set_name(log, name)
      vim.bo[log].bufhidden = 'hide'
    end
    vim.bo[log].modifiable = true
    vim.api.nvim_buf_set_lines(
      log,
      0,
      -1,
      false,
      vim.split(result.text, '\n', { plain = true, trimempty = true })
    )
    vim.bo[log].modifiable = false
    vim.cmd.sbuffer(log)
    fire('AgentlsBackgroundLog', { id = id, bufnr = log })
  end)
end

---@param bufnr integer
---@param item agentls.BackgroundTask
---@param action string
function M.act(bufnr, item, action)
  if action == 'Review' then
    history.call(bufnr, 'agent.reviewBackgroundTask', { id = item.id }, function(result)
      vim.cmd.checktime() -- files the review wrote on disk reload
      transcript.note(('Review of background task %s: %s.'):format(item.id, outcome(result)))
      notify(outcome(result) .. ' (:AgentUndo takes it back)')
      fire('AgentlsBackgroundReviewed', { result = result })
    end)
  elseif action == 'Open Log' then
    open_log(bufnr, item.id)
  elseif action == 'Cancel' then
    history.call(bufnr, 'agent.cancelBackgroundTask', { id = item.id }, function()
      notify(('cancelling %s'):format(item.title))
    end)
  elseif action == 'Discard' then
    history.call(bufnr, 'agent.discardBackgroundTask', { id = item.id }, function()
      notify(('discarded %s (its worktree and branch)'):format(item.title))
      fire('AgentlsBackgroundDiscarded', { id = item.id })
    end)
  end
end

---Pick a task, then what to do with it.
---@param bufnr integer
function M.pick(bufnr)
  bufnr = bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr
  history.call(bufnr, 'agent.backgroundTasks', nil, function(items)
    if #items == 0 then
      notify('no background tasks (:Agent! {task} starts one)')
      return
    end
    vim.ui.select(items, {
      prompt = 'agentls: background tasks',
      format_item = M.describe,
    }, function(item)
      if not item then
        return
      end
      vim.ui.select(M.actions(item), { prompt = item.title }, function(action)
        if action then
          M.act(bufnr, item, action)
        end
      end)
    end)
  end)
end

---agent/backgroundTask: said once a task ends (the list shows the rest).
---@param params agentls.BackgroundTask
function M.changed(_, params)
  fire('AgentlsBackgroundTask', { task = params })
  local ended = params.status ~= 'queued' and params.status ~= 'running' and not params.reviewed
  if ended then
    local level = params.status == 'done' and vim.log.levels.INFO or vim.log.levels.WARN
    notify(('background task %s: %s (:AgentTasks)'):format(params.status, params.title), level)
  end
end

return M
