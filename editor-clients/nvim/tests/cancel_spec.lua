-- :AgentCancel stops a long bash step, which the user allowed through vim.ui.select.
local h = require('harness')

h.main(function()
  h.setup({ settings = { approveCommands = 'ask' } })
  local asked = {}
  vim.ui.select = function(items, opts, on_choice)
    table.insert(asked, opts.prompt)
    for _, item in ipairs(items) do
      if opts.format_item(item) == 'Allow' then
        return on_choice(item)
      end
    end
  end
  vim.cmd.edit('main.py')
  local pid
  local result = h.run('sleep a while', function()
    h.wait('the bash step to start', function()
      return vim.fn.filereadable('pid') == 1 and vim.trim(h.read('pid')) ~= ''
    end)
    pid = vim.trim(h.read('pid'))
    vim.cmd('AgentCancel')
  end)
  return { result = result, pid = tonumber(pid), asked = asked }
end)
