-- A first use: Neovim started in an unrelated folder, a file opened by its path in a folder
-- without root markers, a task that edits it and one edit the server refuses.
local h = require('harness')

h.main(function()
  h.setup({ review = 'none' })
  local notes = {}
  vim.notify = function(message, level)
    table.insert(notes, { message = message, level = level })
  end
  local elsewhere = vim.fs.joinpath(vim.fs.dirname(h.root), 'home')
  vim.fn.mkdir(elsewhere, 'p')
  vim.cmd.cd(elsewhere)
  vim.cmd.edit(vim.fs.joinpath(h.root, 'app.py'))
  local result = h.run('change it')
  local client = require('agentls.server').running(0)
  h.wait('the notification of the end', function()
    return #notes >= 1
  end)
  local lines = vim.api.nvim_buf_get_lines(vim.fn.bufnr(h.root .. '/app.py'), 0, -1, true)
  vim.cmd('AgentLog')
  return {
    result = result,
    root = client and client.root_dir,
    buffer = table.concat(lines, '\n'),
    notes = notes,
    transcript = vim.api.nvim_buf_get_lines(0, 0, -1, false),
  }
end)
