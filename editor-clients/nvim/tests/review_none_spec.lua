-- review = "none": the edit applies and is saved at once, with no review tab. The task
-- starts from a Visual selection, which goes along.
local h = require('harness')

h.main(function()
  h.setup({ review = 'none' })
  vim.cmd.edit('app.py')
  local opened = h.events('AgentlsReviewOpen')
  -- Started from a charwise Visual selection of the CJK and emoji text between the quotes.
  local result = h.run('change the greeting', nil, function()
    h.keys("2Gf'lvt':Agent change the greeting<CR>")
  end)
  return {
    result = result,
    opened = #opened,
    buffer = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n') .. '\n',
    modified = vim.bo.modified,
  }
end)
