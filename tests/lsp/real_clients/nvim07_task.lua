-- Run one agentls task from Neovim 0.7's built-in client, as a user would with
-- vim.lsp.start_client and a workspace/executeCommand request. Writes the task's result and
-- the edited buffers, as JSON, to $AGENTLS_TEST_OUT; the LSP traffic goes to the test's
-- $HOME/.cache/nvim/lsp.log.
vim.lsp.set_log_level('debug')
local root = os.getenv('AGENTLS_TEST_ROOT')
vim.cmd('edit ' .. root .. '/app.py')
local bufnr = vim.api.nvim_get_current_buf()
local client_id = vim.lsp.start_client({
  name = 'agentls',
  cmd = { os.getenv('AGENTLS_PYTHON'), '-m', 'agentls' },
  root_dir = root,
})
-- As nvim-lspconfig does: every buffer of a file type is attached, so the buffer Neovim
-- creates for a new file is opened (didOpen) while the edit is being applied.
vim.api.nvim_create_autocmd('FileType', {
  callback = function(args) vim.lsp.buf_attach_client(args.buf, client_id) end,
})
vim.lsp.buf_attach_client(bufnr, client_id)
local client = vim.lsp.get_client_by_id(client_id)
assert(vim.wait(30000, function() return client.initialized end), 'never initialized')
local result, failure
client.request('workspace/executeCommand', {
  command = 'agent.runTask',
  arguments = { { task = 'change things', uri = vim.uri_from_bufnr(bufnr) } },
}, function(err, res)
  failure, result = err, res or vim.NIL
end, bufnr)
assert(vim.wait(60000, function() return result ~= nil end), 'no answer')
assert(failure == nil, vim.inspect(failure))
local function text(name)
  local buffer = vim.fn.bufnr(root .. '/' .. name)
  local lines = vim.api.nvim_buf_get_lines(buffer, 0, -1, true)
  return table.concat(lines, '\n') .. '\n'
end
local out = io.open(os.getenv('AGENTLS_TEST_OUT'), 'w')
out:write(vim.fn.json_encode({ result = result, buffer = text('app.py'), new = text('notes.md') }))
out:close()
client.stop()
vim.wait(5000, function() return client.is_stopped() end)
