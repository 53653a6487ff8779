-- :AgentNew between two tasks: the second starts a conversation of its own.
local h = require('harness')

h.main(function()
  h.setup({})
  local notes = {}
  vim.notify = function(message)
    table.insert(notes, message)
  end
  vim.cmd.edit('app.py')
  local first = h.run('first task')
  vim.cmd('AgentNew')
  h.wait('the new session', function()
    return vim.tbl_contains(notes, 'agentls: new session')
  end)
  local second = h.run('second task')
  return { first = first.status, second = second.status, notes = notes }
end)
