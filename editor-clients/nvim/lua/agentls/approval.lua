-- Command approvals (agent/approveCommand, docs/protocol.md) through vim.ui.select. The
-- words (prompt, choices) are the server's; the plugin only shows them.
local transcript = require('agentls.transcript')

local M = {}

M.method = 'agent/approveCommand'

---What the plugin tells the server it answers, in `capabilities.experimental`.
M.capabilities = { agentls = { approveCommand = true } }

---@class agentls.Choice
---@field id string
---@field title string

---@class agentls.ApproveCommandParams
---@field command string
---@field cwd string
---@field sandboxed boolean False for a command that would run outside the sandbox.
---@field prompt string
---@field choices agentls.Choice[]

---Put the server's question to the user; the request waits (the handler yields) until
---they choose. A dismissed prompt answers null, which the server takes as a denial.
---@param params agentls.ApproveCommandParams
---@return {choice: string}|vim.NIL
function M.handle(_, params)
  local co, is_main = coroutine.running()
  if not co or is_main then
    return vim.NIL
  end
  vim.ui.select(params.choices, {
    prompt = params.prompt .. ':\n' .. params.command,
    kind = 'agentls.approval',
    format_item = function(choice)
      return choice.title
    end,
  }, function(choice)
    -- Scheduled: a synchronous vim.ui.select calls back before the yield below.
    vim.schedule(function()
      coroutine.resume(co, choice)
    end)
  end)
  local choice = coroutine.yield()
  transcript.detail('approval: ' .. (choice and choice.title or 'dismissed'))
  return choice and { choice = choice.id } or vim.NIL
end

return M
