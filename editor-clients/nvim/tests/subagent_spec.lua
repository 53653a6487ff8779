-- A task that starts a subagent: the transcript shows the subagent's steps, text and end
-- indented under the task's `agent` step, and only the task's own text as the task's.
local h = require('harness')

h.main(function()
  h.setup({})
  local result = h.run('delegate')
  return {
    result = result,
    transcript = vim.api.nvim_buf_get_lines(vim.fn.bufnr('agentls://transcript'), 0, -1, false),
  }
end)
