-- Edits that must not land: all hunks rejected; the buffer changed during the review;
-- the task cancelled while the review is open.
local h = require('harness')

h.main(function()
  h.setup()
  vim.cmd.edit('app.py')
  local opened = h.events('AgentlsReviewOpen')
  local reviewed = h.events('AgentlsReviewDone')
  local function review_opens(count)
    h.wait('review ' .. count, function()
      return #opened == count
    end)
  end
  local report = {}
  report.rejected = h.run('change it', function()
    review_opens(1)
    h.keys('gR')
  end)
  report.stale = h.run('change it again', function()
    review_opens(2)
    h.keys('<C-w>hggO# typed by the user<Esc>') -- the user edits the file during the review
    h.keys('gA')
  end)
  report.withdrawn = h.run('change it once more', function()
    review_opens(3)
    vim.cmd('AgentCancel')
  end)
  report.reviews = reviewed
  report.tabs = #vim.api.nvim_list_tabpages()
  report.buffer = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  return report
end)
