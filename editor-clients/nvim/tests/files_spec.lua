-- Edits to a file that is not open (reviewed in a tab that loads it) and to a new file.
local h = require('harness')

h.main(function()
  h.setup()
  vim.cmd.edit('main.py')
  local opened = h.events('AgentlsReviewOpen')
  local loaded_before = vim.fn.bufloaded('lib.py') == 1
  local result = h.run('update lib.py and add a notes file', function()
    h.wait('the review of lib.py', function()
      return #opened == 1
    end)
    h.keys('gA') -- accept the whole edit
    h.wait('the review of the new file', function()
      return #opened == 2
    end)
    h.keys('ga')
  end)
  return {
    result = result,
    loaded_before = loaded_before,
    labels = vim.tbl_map(function(e)
      return e.label
    end, opened),
    lib_modified = vim.bo[vim.fn.bufnr('lib.py')].modified,
    current = vim.fn.expand('%:t'),
  }
end)
