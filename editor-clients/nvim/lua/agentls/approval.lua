-- Command approvals (window/showMessageRequest) through vim.ui.select.
local transcript = require('agentls.transcript')

local M = {}

---Put the server's question to the user; the request waits (the handler yields) until
---they choose. A dismissed prompt answers null, which the server takes as a denial.
---@param params lsp.ShowMessageRequestParams
---@return lsp.MessageActionItem|vim.NIL
function M.handle(_, params)
  local co, is_main = coroutine.running()
  local actions = params.actions or {}
  if not co or is_main or #actions == 0 then
    return vim.NIL
  end
  vim.ui.select(actions, {
    prompt = params.message,
    kind = 'agentls.approval',
    format_item = function(action)
      return action.title
    end,
  }, function(choice)
    -- Scheduled: a synchronous vim.ui.select calls back before the yield below.
    vim.schedule(function()
      coroutine.resume(co, choice)
    end)
  end)
  local choice = coroutine.yield()
  transcript.detail('approval: ' .. (choice and choice.title or 'dismissed'))
  return choice or vim.NIL
end

return M
