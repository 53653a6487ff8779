-- :Agent opens the transcript beside the code: a command's output shows there while it
-- runs (the bash step waits for the file `go`, made once its first line is seen), and a
-- command that exits non-zero is marked ✗.
local h = require('harness')

h.main(function()
  h.setup({})
  local warnings = {}
  vim.notify = function(message, level)
    if level == vim.log.levels.WARN then
      table.insert(warnings, message)
    end
  end
  vim.cmd.edit('app.py')
  local code = vim.api.nvim_get_current_win()
  local lines = function()
    return vim.api.nvim_buf_get_lines(vim.fn.bufnr('agentls://transcript'), 0, -1, false)
  end
  local running = {}
  local result = h.run('count', function()
    local ok = vim.wait(20000, function()
      return vim.tbl_contains(lines(), '    tick 1')
    end, 5)
    assert(ok, 'no output in the transcript:\n' .. table.concat(lines(), '\n'))
    running = lines()
    vim.fn.writefile({}, 'go')
  end)
  return {
    result = result,
    running = running,
    log = lines(),
    shown = vim.fn.bufwinid(vim.fn.bufnr('agentls://transcript')) ~= -1,
    stayed = vim.api.nvim_get_current_win() == code,
    warnings = warnings,
  }
end)
