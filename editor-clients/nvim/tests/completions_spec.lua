-- Completions on: the server is attached to each file buffer as it is opened, so Neovim's
-- inline completion (0.12) has a client to ask; off again: a newly opened file is not.
local h = require('harness')

---@param name string
---@return boolean
local function attached(name)
  return #vim.lsp.get_clients({ name = 'agentls', bufnr = vim.fn.bufnr(name) }) == 1
end

h.main(function()
  vim.cmd.edit('before.py') -- open before setup: attached by it
  h.setup({ settings = { completions = { enabled = true } } })
  vim.cmd.edit('app.py')
  vim.cmd.edit('new.py') -- a new file, not on disk yet
  h.wait('the server attached to the open files', function()
    return attached('before.py') and attached('app.py') and attached('new.py')
  end)
  local client = vim.lsp.get_clients({ name = 'agentls' })[1]
  h.wait('the server initialized', function()
    return client.initialized
  end)
  h.setup({ settings = {} })
  vim.cmd.edit('later.py')
  vim.wait(500)
  return {
    clients = #vim.lsp.get_clients({ name = 'agentls' }),
    later = attached('later.py'),
    inline_completion = client.server_capabilities.inlineCompletionProvider or vim.NIL,
  }
end)
