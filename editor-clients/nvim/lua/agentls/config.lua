-- agentls options: the defaults, and the user's merged over them.
local M = {}

---@type agentls.Config
M.defaults = {
  cmd = { 'agentls' },
  settings = {},
  review = 'diff',
  progress = 'window',
  root_markers = { '.git', 'pyproject.toml', 'package.json', 'Cargo.toml', 'go.mod', 'Makefile' },
  keymaps = {
    accept = 'ga',
    reject = 'gr',
    accept_all = 'gA',
    reject_all = 'gR',
    finish = 'q',
  },
}

---@type agentls.Config
M.options = vim.deepcopy(M.defaults)

local function one_of(...)
  local allowed = { ... }
  return function(value)
    return vim.tbl_contains(allowed, value), table.concat(allowed, ' or ')
  end
end

---Merge `opts` over the defaults; a bad option raises an error that names it.
---@param opts? table
---@return agentls.Config
function M.set(opts)
  local merged = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  vim.validate('cmd', merged.cmd, 'table')
  vim.validate('cmd[1]', merged.cmd[1], 'string')
  vim.validate('settings', merged.settings, 'table')
  vim.validate('review', merged.review, one_of('diff', 'none'))
  vim.validate('progress', merged.progress, one_of('window', 'notify', 'none'))
  vim.validate('root_markers', merged.root_markers, 'table')
  for name, key in pairs(merged.keymaps) do
    vim.validate('keymaps.' .. name, key, 'string')
  end
  M.options = merged
  return merged
end

---The settings object as JSON wants it: an empty one is an object, not a list.
---@return table
function M.settings()
  local settings = M.options.settings
  return next(settings) == nil and vim.empty_dict() or settings
end

return M
