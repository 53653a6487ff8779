-- :checkhealth agentls with a valid setup, then with a bad setting.
local h = require('harness')

---@return string[]
local function checkhealth()
  vim.cmd('checkhealth agentls')
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  vim.cmd('bwipeout!')
  return lines
end

h.main(function()
  h.setup({ settings = { maxSteps = 20, approveCommands = 'ask' } })
  local valid = checkhealth()
  h.setup({ settings = { maxSteps = 0 } })
  return { valid = valid, invalid = checkhealth() }
end)
