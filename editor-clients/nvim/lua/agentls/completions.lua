-- Inline completions (the server's `completions` setting). Neovim 0.12's own
-- vim.lsp.inline_completion asks the clients attached to the buffer being typed in, while the
-- plugin attaches the server only to the buffers a task runs against: with completions on,
-- it attaches it to every file buffer as it is opened instead.
local M = {}

---Whether `settings` turn the server's inline completions on.
---@param settings table
---@return boolean
function M.enabled(settings)
  local completions = settings.completions
  return type(completions) == 'table' and completions.enabled == true
end

---@param bufnr integer
local function attach(bufnr)
  local server = require('agentls.server')
  if vim.api.nvim_buf_is_loaded(bufnr) and server.is_file(bufnr) then
    server.client_for(bufnr)
  end
end

---With completions on, attach the server to the file buffers open now and opened later;
---with them off, stop doing so (buffers already attached stay attached).
---@param settings table
function M.follow(settings)
  local group = vim.api.nvim_create_augroup('agentls.completions', { clear = true })
  if not M.enabled(settings) then
    return
  end
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
    group = group,
    callback = function(event)
      attach(event.buf)
    end,
  })
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    attach(bufnr)
  end
end

return M
