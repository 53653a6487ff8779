-- Review an edit of the open buffer: accept the first hunk (a line with CJK and emoji),
-- reject the second, through the review's keys; then the task goes on to a bash step.
local h = require('harness')

h.main(function()
  h.setup()
  vim.cmd.edit('app.py')
  local opened = h.events('AgentlsReviewOpen')
  local reviewed = h.events('AgentlsReviewDone')
  local windows_during_review, status_during_review
  local hunk_marks = {}
  local progress = {}
  vim.api.nvim_create_autocmd('LspProgress', {
    callback = function(event)
      table.insert(progress, event.data.params.value.message or '')
    end,
  })
  local result = h.run('change the greeting', function()
    h.wait('the review to open', function()
      return #opened > 0
    end)
    windows_during_review = #vim.api.nvim_tabpage_list_wins(0)
    status_during_review = require('agentls').status()
    assert(vim.wo.diff, 'the review window is not in diff mode')
    local marks = vim.api.nvim_buf_get_extmarks(0, -1, 0, -1, { details = true })
    for _, mark in ipairs(marks) do
      for _, chunk in ipairs(mark[4].virt_text or {}) do
        table.insert(hunk_marks, chunk[1])
      end
    end
    h.keys('gg]c') -- to the first change, as in any diff
    h.keys('ga') -- accept it; the cursor moves on to the next hunk
    h.keys('gr') -- reject that one; every hunk is decided, so the review ends
  end)
  local buffer = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n') .. '\n'
  local modified = vim.bo.modified
  vim.cmd('AgentLog')
  return {
    result = result,
    hunks = opened[1].hunks,
    hunk_marks = hunk_marks,
    review = reviewed[1],
    windows_during_review = windows_during_review,
    status_during_review = status_during_review,
    progress = progress,
    tabs_after = #vim.api.nvim_list_tabpages(),
    buffer = buffer,
    modified = modified,
    transcript = vim.api.nvim_buf_get_lines(0, 0, -1, false),
  }
end)
