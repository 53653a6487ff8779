-- An MCP server's question to the user (agent/elicit, docs/protocol.md): each field through
-- vim.ui.input (its default pre-filled) or vim.ui.select (choices, yes/no). The words are
-- the server's; values go back as typed, and the server converts them.
local transcript = require('agentls.transcript')

local M = {}

M.method = 'agent/elicit'

---What the plugin tells the server it answers, in `capabilities.experimental.agentls`.
M.capabilities = { elicit = true }

---@class agentls.ElicitField
---@field name string
---@field title string
---@field description string
---@field type string
---@field choices string[]|vim.NIL
---@field default any
---@field required boolean

---@class agentls.ElicitParams
---@field server string
---@field prompt string
---@field message string
---@field fields agentls.ElicitField[]

---@param value any
---@return string
local function shown(value)
  if value == nil or value == vim.NIL then
    return ''
  end
  if type(value) == 'boolean' then
    return value and 'yes' or 'no'
  end
  return tostring(value)
end

---One field's answer: nil when the user dismissed it (the whole form is then cancelled).
---@param co thread
---@param field agentls.ElicitField
---@param heading string
---@return string|nil
local function ask(co, field, heading)
  local label = heading .. field.title .. (field.required and '*' or '')
  if field.description ~= '' then
    label = label .. ' (' .. field.description .. ')'
  end
  local choices = field.choices ~= vim.NIL and field.choices or nil
  if field.type == 'boolean' then
    choices = { 'yes', 'no' }
  end
  local function answered(value)
    vim.schedule(function()
      coroutine.resume(co, value)
    end)
  end
  if choices then
    vim.ui.select(choices, { prompt = label .. ':', kind = 'agentls.elicit' }, answered)
  else
    vim.ui.input({ prompt = label .. ': ', default = shown(field.default) }, answered)
  end
  return coroutine.yield()
end

---@param params agentls.ElicitParams
---@return {action: string, content: table}|vim.NIL
function M.handle(_, params)
  local co, is_main = coroutine.running()
  if not co or is_main then
    return vim.NIL
  end
  local content = {}
  local heading = params.prompt .. ': ' .. params.message .. '\n'
  for _, field in ipairs(params.fields) do
    local value = ask(co, field, heading)
    heading = ''
    if value == nil then
      transcript.detail('question from ' .. params.server .. ': dismissed')
      return vim.NIL
    end
    if value ~= '' then
      content[field.name] = value
    end
  end
  transcript.detail('question from ' .. params.server .. ': answered')
  if next(content) == nil then
    content = vim.empty_dict() -- a JSON object, not an empty array
  end
  return { action = 'accept', content = content }
end

return M
