-- While a task runs: its plan in the progress window and the transcript, and :Agent offering
-- to add the text to it. The bash step waits for the file `go`, made once the text is sent.
local h = require('harness')

h.main(function()
  h.setup({})
  local offered = {}
  vim.ui.select = function(items, opts, on_choice)
    table.insert(offered, opts.prompt)
    on_choice(items[1])
  end
  local notes = {}
  vim.notify = function(message)
    table.insert(notes, message)
  end
  vim.cmd.edit('app.py')
  local window = {}
  local result = h.run('fix it', function()
    h.wait('the plan', function()
      return #require('agentls.progress').window_lines() > 1
    end)
    window = require('agentls.progress').window_lines()
    vim.cmd('Agent also add a test')
    h.wait('the text to be added', function()
      return vim.tbl_contains(notes, 'agentls: added to the running task')
    end)
    vim.fn.writefile({}, 'go')
  end)
  local log = vim.api.nvim_buf_get_lines(vim.fn.bufnr('agentls://transcript'), 0, -1, false)
  return { result = result, window = window, offered = offered, log = log }
end)
