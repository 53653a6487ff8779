-- agentls for Neovim: run the agentls coding agent against the current buffer and review
-- each of its edits as a diff. See :help agentls.
local config = require('agentls.config')

local M = {}

---Set the options (see `:help agentls-options`). Calling it is optional.
---@param opts? agentls.Config|table
function M.setup(opts)
  config.set(opts)
  require('agentls.completions').follow(config.options.settings)
end

---Offer to add `task` (asked for when nil) to the running task instead of starting one.
---@param task? string
local function offer_to_add(task)
  local function offer(text)
    local choices = { 'Add it to the running task', 'Do nothing' }
    vim.ui.select(choices, {
      prompt = ('agentls: a task is running. Add "%s" to it?'):format(text),
    }, function(choice)
      if choice == choices[1] then
        require('agentls.task').steer(text)
      end
    end)
  end
  if task and task ~= '' then
    return offer(task)
  end
  vim.ui.input({ prompt = 'agentls: add to the running task: ' }, function(input)
    if input and input ~= '' then
      require('agentls.task').steer(input)
    end
  end)
end

---Run `task` against a buffer, with an optional selection. Without a task, ask for one.
---While a task runs, offer to add `task` to it instead (see |agentls.steer()|).
---@param task? string
---@param opts? agentls.RunOpts
function M.run(task, opts)
  if M.is_running() then
    return offer_to_add(task)
  end
  opts = opts or {}
  local bufnr = opts.bufnr or 0
  bufnr = bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr
  if task and task ~= '' then
    require('agentls.task').start(task, bufnr, opts.range, opts.images)
    return
  end
  vim.ui.input({ prompt = 'agentls task: ' }, function(input)
    if input and input ~= '' then
      require('agentls.task').start(input, bufnr, opts.range, opts.images)
    end
  end)
end

---Cancel the running task (window/workDoneProgress/cancel with its token).
---@return boolean asked Whether a task was running.
function M.cancel()
  return require('agentls.task').cancel()
end

---Add `text` to the running task: the model reads it at its next step.
---@param text string
---@return boolean sent Whether a task was running.
function M.steer(text)
  return require('agentls.task').steer(text)
end

---Start a new conversation: later tasks do not remember earlier ones.
function M.new_session()
  require('agentls.task').new_session(vim.api.nvim_get_current_buf())
end

---Open the transcript (:AgentLog).
function M.open_log()
  require('agentls.transcript').open()
end

---What the running task is doing ("" when none runs), for a statusline.
---@return string
function M.status()
  return require('agentls.progress').status()
end

---Whether a task is running.
---@return boolean
function M.is_running()
  return require('agentls.task').current ~= nil
end

return M
