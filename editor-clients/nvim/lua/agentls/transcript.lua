-- The transcript (:AgentLog): a markdown buffer with each task, the model's streamed text,
-- each tool step and its outcome, and how the task ended.
local M = {}

local NAME = 'agentls://transcript'

---@type integer?
local buf = nil
local tasks = 0
---Whether the last line is streamed text that the next piece continues.
local streaming = false

---@return integer
local function buffer()
  if buf and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
  buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, NAME)
  vim.bo[buf].filetype = 'markdown'
  vim.bo[buf].modifiable = false
  return buf
end

---Windows showing the transcript that were at its end, so they follow new text.
---@param b integer
---@return integer[]
local function following(b)
  local last = vim.api.nvim_buf_line_count(b)
  return vim.tbl_filter(function(win)
    return vim.api.nvim_win_get_cursor(win)[1] >= last
  end, vim.fn.win_findbuf(b))
end

---@param b integer
---@return boolean
local function is_empty(b)
  return vim.api.nvim_buf_line_count(b) == 1 and vim.api.nvim_buf_get_lines(b, 0, 1, false)[1] == ''
end

---Append `text` to the buffer; with `continue`, its first line extends the last line.
---@param text string
---@param continue boolean
local function append(text, continue)
  local b = buffer()
  local windows = following(b)
  local lines = vim.split(text, '\n', { plain = true })
  vim.bo[b].modifiable = true
  local count = vim.api.nvim_buf_line_count(b)
  if continue then
    local last = vim.api.nvim_buf_get_lines(b, count - 1, count, false)[1]
    lines[1] = last .. lines[1]
    vim.api.nvim_buf_set_lines(b, count - 1, count, false, lines)
  else
    vim.api.nvim_buf_set_lines(b, is_empty(b) and 0 or count, -1, false, lines)
  end
  vim.bo[b].modifiable = false
  local last = vim.api.nvim_buf_line_count(b)
  for _, win in ipairs(windows) do
    vim.api.nvim_win_set_cursor(win, { last, 0 })
  end
end

---A block of its own: an empty line before it unless the buffer is empty.
---@param text string
local function block(text)
  append(is_empty(buffer()) and text or ('\n' .. text), false)
  streaming = false
end

---@param task string
function M.begin(task)
  tasks = tasks + 1
  local quoted = task:gsub('\n', '\n> ')
  block(('## Task %d\n\n> %s'):format(tasks, quoted))
end

---A piece of the model's streamed text.
---@param text string
function M.text(text)
  if not streaming then
    block('')
  end
  append(text, true)
  streaming = true
end

---Lines of a running command's output kept under its step (the server sends them all).
local TAIL_LINES = 10

---The running step's command output: where it starts in the buffer, its last lines, and
---how many came in all.
---@type { start: integer, lines: string[], count: integer }?
local tail = nil

---Whether the transcript is in a window of the current tab, where the user looks.
---@return boolean
local function shown()
  return buf ~= nil and vim.api.nvim_buf_is_valid(buf) and vim.fn.bufwinid(buf) ~= -1
end

---A tool step starting or ending (agent/step): ✓ or ✗ and what happened, in the server's
---words (`detail`; a command that exited non-zero is `failed`).
---@param step { tool: string, summary: string, state: string, detail?: string }
function M.step(step)
  if step.state == 'started' then
    block(('- **%s** `%s`'):format(step.tool, step.summary))
    tail = { start = vim.api.nvim_buf_line_count(buffer()), lines = {}, count = 0 }
    return
  end
  tail = nil
  local mark = step.state == 'succeeded' and '✓' or '✗'
  append(('  %s %s'):format(mark, step.detail or step.state), false)
  if step.state == 'failed' and not shown() then
    -- A refused edit or command must be seen where the user looks, not only here.
    vim.schedule(function()
      vim.notify(
        ('agentls: %s %s: %s'):format(step.tool, step.summary, step.detail or 'failed'),
        vim.log.levels.WARN
      )
    end)
  end
end

---Lines the running step's command printed (agent/output): its last lines, under the step.
---@param text string
function M.output(text)
  if not tail then
    return
  end
  for _, line in ipairs(vim.split((text:gsub('\n$', '')), '\n', { plain = true })) do
    table.insert(tail.lines, line)
    tail.count = tail.count + 1
  end
  while #tail.lines > TAIL_LINES do
    table.remove(tail.lines, 1)
  end
  local lines = {}
  if tail.count > #tail.lines then
    local more = tail.count - #tail.lines
    table.insert(lines, ('    … %d more line%s'):format(more, more == 1 and '' or 's'))
  end
  for _, line in ipairs(tail.lines) do
    table.insert(lines, '    ' .. line)
  end
  local b = buffer()
  local windows = following(b)
  vim.bo[b].modifiable = true
  vim.api.nvim_buf_set_lines(b, tail.start, -1, false, lines)
  vim.bo[b].modifiable = false
  for _, win in ipairs(windows) do
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(b), 0 })
  end
end

---`[x]` done, `[>]` in progress, `[ ]` to do: one line per item of the model's plan.
---@param items agentls.PlanItem[]
---@return string[]
function M.checklist(items)
  local marks = { completed = '[x]', in_progress = '[>]' }
  return vim.tbl_map(function(item)
    return ('%s %s'):format(marks[item.status] or '[ ]', item.content)
  end, items)
end

---The model's plan, each time it changes (agent/plan).
---@param items agentls.PlanItem[]
function M.plan(items)
  local lines = vim.tbl_map(function(line)
    return '  - ' .. line
  end, M.checklist(items))
  block('**plan**\n' .. table.concat(lines, '\n'))
end

---Each running subagent's depth and its text since its last step, by its id.
---@type table<string, { depth: integer, text: string }>
local subagents = {}

---A subagent's line, indented under the `agent` step that started it (subagents of one turn
---run at once: their lines interleave, each naming its subagent).
---@param id string
---@param text string
local function nested(id, text)
  local depth = subagents[id] and subagents[id].depth or 1
  append(string.rep('  ', 2 * depth) .. text, false)
  streaming = false
end

---What a subagent said since its last step, as indented lines.
---@param id string
local function flush(id)
  local agent = subagents[id]
  if not agent or agent.text == '' then
    return
  end
  for _, line in ipairs(vim.split(vim.trim(agent.text), '\n', { plain = true })) do
    nested(id, '  ' .. line)
  end
  agent.text = ''
end

---A subagent starting or ending (agent/subagent).
---@param event { subagent: string, state: string, type?: string, description?: string, depth?: integer, detail?: string }
function M.subagent(event)
  local id = event.subagent
  if event.state == 'started' then
    subagents[id] = { depth = event.depth or 1, text = '' }
    nested(id, ('- **%s** %s: %s'):format(id, event.type, event.description))
    return
  end
  flush(id)
  nested(id, ('  %s %s'):format(event.state == 'succeeded' and '✓' or '✗', event.detail or ''))
  subagents[id] = nil
end

---A subagent's own step (agent/step with `subagent`).
---@param step { subagent: string, tool: string, summary: string, state: string, detail?: string }
function M.subagent_step(step)
  flush(step.subagent)
  if step.state == 'started' then
    nested(step.subagent, ('  - [%s] **%s** `%s`'):format(step.subagent, step.tool, step.summary))
  else
    local mark = step.state == 'succeeded' and '✓' or '✗'
    nested(step.subagent, ('    %s %s'):format(mark, step.detail or step.state))
  end
end

---A piece of a subagent's text (agent/text with `subagent`): shown at its next step or end.
---@param id string
---@param text string
function M.subagent_text(id, text)
  local agent = subagents[id]
  if agent then
    agent.text = agent.text .. text
  end
end

---Text the user added to the running task (agent.steer accepted it).
---@param text string
function M.added(text)
  block('**added to the task**: ' .. text:gsub('\n', ' '))
end

---How the task ended: the server's outcome line (status, steps, edits, tokens, cache,
---cost), the one the terminal and VS Code show too.
---@param result agentls.TaskResult
function M.finish(result)
  tail = nil
  -- In parentheses: gsub's second value, its count, would be a line of its own.
  local lines = { ((result.outcome or result.status):gsub('^(%w+)', '**%1**')) }
  if result.status ~= 'done' and result.summary and result.summary ~= '' then
    table.insert(lines, '')
    table.insert(lines, result.summary)
  end
  block(table.concat(lines, '\n'))
end

---The task's request failed (an error answer rather than a result).
---@param message string
function M.failed(message)
  block('**error**: ' .. message)
end

---A paragraph of our own (a new session).
---@param message string
function M.note(message)
  block('_' .. message .. '_')
end

---A line under the step that is running (an approval, a review's outcome).
---@param message string
function M.detail(message)
  append('  ' .. message, false)
  streaming = false
end

---Show the transcript in a split (reusing the window that shows it); `focus` goes there.
---@param focus? boolean
function M.open(focus)
  local b = buffer()
  local win = vim.fn.bufwinid(b)
  local from = vim.api.nvim_get_current_win()
  if win == -1 then
    vim.cmd('botright split')
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, b)
    vim.wo[win].wrap = true
  end
  vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(b), 0 })
  vim.api.nvim_set_current_win(focus == false and from or win)
end

return M
