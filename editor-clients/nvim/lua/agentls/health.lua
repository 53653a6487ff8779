-- :checkhealth agentls
local config = require('agentls.config')

local M = {}

local KEY_NAMES = { 'ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN' }

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

---The user's .env file, if it sets a key (the value is never read out). A project's .env
---belongs to the repository and never gives the server a key.
---@return string?, string?
local function key_in_config_file()
  local config_home = vim.env.XDG_CONFIG_HOME or vim.fs.joinpath(vim.env.HOME or '', '.config')
  local path = vim.fs.joinpath(config_home, 'agentls', '.env')
  if vim.fn.filereadable(path) ~= 1 then
    return nil, nil
  end
  for _, line in ipairs(vim.fn.readfile(path)) do
    for _, name in ipairs(KEY_NAMES) do
      if
        line:match('^%s*export%s+' .. name .. '%s*=%s*%S')
        or line:match('^%s*' .. name .. '%s*=%s*%S')
      then
        return name, path
      end
    end
  end
  return nil, nil
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

local function check_key()
  for _, name in ipairs(KEY_NAMES) do
    if (vim.env[name] or '') ~= '' then
      vim.health.ok(('API key: %s is set in the environment'):format(name))
      return
    end
  end
  local name, path = key_in_config_file()
  if name then
    vim.health.ok(('API key: %s is set in %s'):format(name, path))
    return
  end
  vim.health.warn('no Anthropic API key is set: tasks will fail', {
    'set ANTHROPIC_API_KEY in the environment',
    'or in ~/.config/agentls/.env (a project .env is not read for it)',
  })
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
  end
  check_key()
end

return M
