-- The `/` commands `:Agent` completes: the project's skills and commands, as its server
-- lists them (`agent.commands`). `:Agent /name args` sends the text as the task; the server
-- expands it.
local server = require('agentls.server')

local M = {}

---Completion of `:Agent`'s first word: the commands starting with `arglead`, asked of the
---project's running server (none before it runs: the first `:Agent` starts it).
---@param arglead string
---@param cmdline string
---@return string[]
function M.complete(arglead, cmdline)
  local typed = cmdline:gsub('^%S+%s*', '', 1) -- what follows `:Agent` (and its range)
  if typed ~= arglead or arglead:sub(1, 1) ~= '/' then
    return {}
  end
  local client = server.running(0)
  if not client or not client.initialized then
    return {}
  end
  local params = { command = 'agent.commands', arguments = {} }
  local answer = client:request_sync('workspace/executeCommand', params, 1000, 0)
  if not answer or answer.err or type(answer.result) ~= 'table' then
    return {}
  end
  local names = {}
  for _, command in ipairs(answer.result) do
    local name = '/' .. command.name
    if vim.startswith(name, arglead) then
      table.insert(names, name)
    end
  end
  return names
end

return M
