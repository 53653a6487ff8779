-- Tool steps as they happen: $/progress arrives as LspProgress (so fidget.nvim and
-- statuslines see it too); this shows our task's in a small window (its plan under the step)
-- or vim.notify.
local config = require('agentls.config')

local M = {}

---@type string?
local token = nil
---@type string
local message = ''
---The model's plan as checklist lines (agent/plan), shown under the step.
---@type string[]
local plan_lines = {}
---@type integer?
local win = nil
---@type integer?
local buf = nil

local function close()
  if win and vim.api.nvim_win_is_valid(win) then
    vim.api.nvim_win_close(win, true)
  end
  win = nil
end

---@param text string
local function show(text)
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    buf = vim.api.nvim_create_buf(false, true)
  end
  local lines = vim.list_extend({ text }, plan_lines)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  local widest = math.max(unpack(vim.tbl_map(vim.fn.strdisplaywidth, lines)))
  local placement = {
    relative = 'editor',
    anchor = 'NE',
    row = 1,
    col = vim.o.columns,
    width = math.min(widest, math.max(vim.o.columns - 4, 10)),
    height = math.min(#lines, math.max(vim.o.lines - 4, 1)),
  }
  if win and vim.api.nvim_win_is_valid(win) then
    vim.api.nvim_win_set_config(win, placement)
    return
  end
  win = vim.api.nvim_open_win(
    buf,
    false,
    vim.tbl_extend('force', placement, {
      style = 'minimal',
      focusable = false,
      noautocmd = true,
      zindex = 60,
    })
  )
  vim.wo[win].winhighlight = 'Normal:NormalFloat'
end

---@param text string
---@param level integer
local function notify(text, level)
  vim.schedule(function()
    vim.notify(text, level, { title = 'agentls' })
  end)
end

---@param value { kind: string, title?: string, message?: string }
local function on_progress(value)
  message = value.message or ''
  local text = 'agentls: ' .. message
  local mode = config.options.progress
  if value.kind == 'end' then
    M.stop()
  elseif mode == 'window' then
    show(text)
  elseif mode == 'notify' then
    notify(text, vim.log.levels.INFO)
  end
end

---Follow the progress of the task started with `task_token`.
---@param task_token string
function M.expect(task_token)
  token = task_token
  on_progress({ kind = 'begin', message = 'starting' })
end

---The task ended (its answer came, whether or not an `end` progress did).
function M.stop()
  close()
  token = nil
  message = ''
  plan_lines = {}
end

---The running task's plan changed (agent/plan): shown under the step, or notified.
---@param items agentls.PlanItem[]
function M.plan(items)
  if not token then
    return
  end
  plan_lines = require('agentls.transcript').checklist(items)
  local mode = config.options.progress
  if mode == 'window' then
    show('agentls: ' .. message)
  elseif mode == 'notify' then
    notify('agentls plan:\n' .. table.concat(plan_lines, '\n'), vim.log.levels.INFO)
  end
end

---The lines of the progress window (none when it is closed), for tests and statuslines.
---@return string[]
function M.window_lines()
  if win and vim.api.nvim_win_is_valid(win) and buf then
    return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  end
  return {}
end

---What the running task is doing, for a statusline ("" when no task runs).
---@return string
function M.status()
  return token and message or ''
end

vim.api.nvim_create_autocmd('LspProgress', {
  group = vim.api.nvim_create_augroup('agentls.progress', { clear = true }),
  callback = function(event)
    local params = event.data and event.data.params
    if token and params and params.token == token and type(params.value) == 'table' then
      on_progress(params.value)
    end
  end,
})

return M
