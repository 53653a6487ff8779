-- The editor's eyes: a real Python language server (pylsp with pyflakes) attached beside
-- agentls; the edits apply at once (review = "none"), and the agent asks for diagnostics
-- and a definition.
local h = require('harness')

h.main(function()
  h.setup({ review = 'none' })
  local pylsp = assert(vim.env.AGENTLS_PYLSP, 'AGENTLS_PYLSP is not set')
  vim.lsp.config('pylsp', {
    cmd = { pylsp },
    filetypes = { 'python' },
    root_markers = { 'lib.py' },
  })
  vim.lsp.enable('pylsp')
  local diagnosed = false
  vim.api.nvim_create_autocmd('DiagnosticChanged', {
    callback = function()
      diagnosed = true
    end,
  })
  vim.cmd.edit('app.py')
  h.wait('pylsp to publish its first diagnostics', function()
    return diagnosed
  end)
  local result = h.run('use greet')
  return {
    result = result,
    diagnostics = vim.tbl_map(function(d)
      return d.message
    end, vim.diagnostic.get(vim.fn.bufnr('app.py'))),
  }
end)
