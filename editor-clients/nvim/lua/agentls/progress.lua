-- Tool steps as they happen: $/progress arrives as LspProgress (so fidget.nvim and
-- statuslines see it too); this shows our task's in a one-line window or vim.notify.
local config = require('agentls.config')

local M = {}

---@type string?
local token = nil
---@type string
local message = ''
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
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { text })
  local width = math.min(vim.fn.strdisplaywidth(text), math.max(vim.o.columns - 4, 10))
  local placement = {
    relative = 'editor',
    anchor = 'NE',
    row = 1,
    col = vim.o.columns,
    width = width,
    height = 1,
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
