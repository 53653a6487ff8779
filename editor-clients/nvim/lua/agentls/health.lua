-- :checkhealth agentls
local config = require('agentls.config')

local M = {}

---Run the server command with `extra` arguments.
---@param extra string[]
---@return vim.SystemCompleted
local function server(extra)
  local cmd = vim.list_extend(vim.deepcopy(config.options.cmd), extra)
  local ok, process = pcall(vim.system, cmd, { text = true })
  if not ok then
    return { code = -1, stdout = '', stderr = tostring(process), signal = 0 }
  end
  return process:wait(10000)
end

local function check_neovim()
  local version = tostring(vim.version())
  if vim.fn.has('nvim-0.11') == 1 then
    vim.health.ok('Neovim ' .. version)
  else
    vim.health.error(
      'Neovim ' .. version .. ' is too old',
      { 'agentls needs Neovim 0.11 or newer' }
    )
  end
end

---@return boolean usable
local function check_server()
  local cmd = config.options.cmd
  local shown = table.concat(cmd, ' ')
  if vim.fn.executable(cmd[1]) ~= 1 then
    vim.health.error(('server command not found: %s'):format(shown), {
      'pip install agentls (or the repository: pip install .)',
      'or set cmd in require("agentls").setup({ cmd = { ... } })',
    })
    return false
  end
  vim.health.ok(('server command: %s (%s)'):format(shown, vim.fn.exepath(cmd[1])))
  local version = server({ '--version' })
  if version.code == 0 then
    vim.health.ok('server version: ' .. vim.trim(version.stdout))
  else
    vim.health.error('the server command failed: ' .. vim.trim(version.stderr or ''))
    return false
  end
  return true
end

---The model, endpoint and key variable a task would use, as the server decides them.
local function check_model()
  local checked = server({ 'check-model', vim.json.encode(config.settings()) })
  local report = vim.trim(checked.stdout or '')
  if checked.code == 0 then
    vim.health.ok('model: ' .. report)
  else
    vim.health.warn('model: ' .. (report ~= '' and report or vim.trim(checked.stderr or '')), {
      'tasks fail until this is fixed (see :help agentls-settings)',
    })
  end
end

local function check_settings()
  local checked = server({ 'check-settings', vim.json.encode(config.settings()) })
  local report = vim.trim(checked.stdout or '')
  if checked.code == 0 then
    vim.health.ok('settings: ' .. report)
  elseif report ~= '' then
    vim.health.warn('settings: ' .. report, { 'the server uses the default for each of these' })
  else
    vim.health.warn('the server could not check the settings: ' .. vim.trim(checked.stderr or ''))
  end
end

function M.check()
  vim.health.start('agentls')
  check_neovim()
  vim.health.info(
    ('review: %s, progress: %s'):format(config.options.review, config.options.progress)
  )
  if check_server() then
    check_settings()
    check_model()
  end
end

return M
