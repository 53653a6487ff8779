-- The review tab: the file as it is (left) and as proposed (right) in diff mode, with
-- buffer-local keys to accept or reject the hunk under the cursor, or all of them.
local config = require('agentls.config')
local workspace_edit = require('agentls.workspace_edit')

local M = {}

local ns = vim.api.nvim_create_namespace('agentls.review')

---@class agentls.ReviewView
---@field file agentls.FileEdit
---@field bufnr integer The real buffer.
---@field original string[] Its lines when the review opened.
---@field proposed integer The scratch buffer with the proposal.
---@field encoding string
---@field title string
---@field decisions (boolean?)[] Per hunk: true accepted, false rejected, nil undecided.
---@field tab integer
---@field from_tab integer The tab the review was opened from.
---@field left integer
---@field right integer
---@field on_done fun(decisions: boolean[]?)
---@field closed boolean
---@field group string Its autocommand group.
local View = {}
View.__index = View

---@param row integer
---@param extent [integer, integer] first row and row count
---@return integer
local function distance(row, extent)
  local first, rows = extent[1], math.max(extent[2], 1)
  if row < first then
    return first - row
  end
  return math.max(row - (first + rows - 1), 0)
end

---The hunk under (or nearest to) the cursor of the current window.
---@return integer
function View:hunk_at_cursor()
  local win = vim.api.nvim_get_current_win()
  local row = vim.api.nvim_win_get_cursor(win)[1] - 1
  -- Any other window on the real buffer (the keys are mapped there too) shows it as it is.
  local side = win == self.right and 'new' or 'old'
  local best, best_distance = 1, math.huge
  for i, extent in ipairs(workspace_edit.extents(self.file.edits, self.decisions)) do
    local d = distance(row, extent[side])
    if d < best_distance then
      best, best_distance = i, d
    end
  end
  return best
end

---@return string
function View:winbar()
  local keys, accepted, rejected = config.options.keymaps, 0, 0
  for i = 1, #self.file.edits do
    accepted = accepted + (self.decisions[i] == true and 1 or 0)
    rejected = rejected + (self.decisions[i] == false and 1 or 0)
  end
  local text = ('proposed ✓%d ✗%d of %d │ %s/%s  %s/%s all  %s done'):format(
    accepted,
    rejected,
    #self.file.edits,
    keys.accept,
    keys.reject,
    keys.accept_all,
    keys.reject_all,
    keys.finish
  )
  return (text:gsub('%%', '%%%%'))
end

---Show the proposal with the rejected hunks left out, and each hunk's state.
function View:render()
  local kept = {}
  for i, edit in ipairs(self.file.edits) do
    if self.decisions[i] ~= false then
      table.insert(kept, edit)
    end
  end
  local buf = self.proposed
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, self.original)
  workspace_edit.apply(kept, buf, self.encoding)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  vim.bo[buf].buflisted = false -- apply_text_edits lists the buffer it changes
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  local last = vim.api.nvim_buf_line_count(buf) - 1
  for i, extent in ipairs(workspace_edit.extents(self.file.edits, self.decisions)) do
    local state, group = '● undecided', 'DiagnosticInfo'
    if self.decisions[i] ~= nil then
      state = self.decisions[i] and '✓ accepted' or '✗ rejected'
      group = self.decisions[i] and 'DiagnosticOk' or 'DiagnosticError'
    end
    vim.api.nvim_buf_set_extmark(buf, ns, math.min(extent.new[1], last), 0, {
      virt_text = { { ('  %s  %s'):format(state, self.file.labels[i]), group } },
      virt_text_pos = 'eol',
    })
  end
  vim.wo[self.right].winbar = self:winbar()
  vim.api.nvim_win_call(self.right, function()
    vim.cmd('diffupdate')
  end)
end

---Put the cursor of the proposal's window on hunk `i`.
---@param i integer
function View:jump(i)
  local extent = workspace_edit.extents(self.file.edits, self.decisions)[i].new
  local row = math.min(extent[1] + 1, vim.api.nvim_buf_line_count(self.proposed))
  vim.api.nvim_set_current_win(self.right)
  vim.api.nvim_win_set_cursor(self.right, { row, 0 })
end

---@return integer?
function View:next_undecided(after)
  local count = #self.file.edits
  for step = 1, count do
    local i = (after + step - 1) % count + 1
    if self.decisions[i] == nil then
      return i
    end
  end
  return nil
end

---Decide the hunk under the cursor; the review finishes once every hunk is decided.
---@param accepted boolean
function View:decide(accepted)
  local i = self:hunk_at_cursor()
  self.decisions[i] = accepted
  local next_hunk = self:next_undecided(i)
  if not next_hunk then
    return self:finish()
  end
  self:render()
  self:jump(next_hunk)
end

---Decide every undecided hunk and finish.
---@param accepted boolean
function View:decide_rest(accepted)
  for i = 1, #self.file.edits do
    if self.decisions[i] == nil then
      self.decisions[i] = accepted
    end
  end
  self:finish()
end

---Close the review; hunks still undecided are rejected.
function View:finish()
  if self.closed then
    return
  end
  local decisions = {}
  for i = 1, #self.file.edits do
    decisions[i] = self.decisions[i] == true
  end
  self:close()
  self.on_done(decisions)
end

---Close the review without a decision (the server withdrew the edit).
function View:withdraw()
  if not self.closed then
    self:close()
    self.on_done(nil)
  end
end

function View:close()
  self.closed = true
  pcall(vim.api.nvim_del_augroup_by_name, self.group)
  for _, key in pairs(config.options.keymaps) do
    pcall(vim.keymap.del, 'n', key, { buffer = self.bufnr })
  end
  if vim.api.nvim_win_is_valid(self.left) then
    vim.api.nvim_win_call(self.left, function()
      vim.cmd('diffoff')
    end)
  end
  if vim.api.nvim_tabpage_is_valid(self.tab) and #vim.api.nvim_list_tabpages() > 1 then
    vim.cmd.tabclose(vim.api.nvim_tabpage_get_number(self.tab))
  end
  if vim.api.nvim_tabpage_is_valid(self.from_tab) then
    vim.api.nvim_set_current_tabpage(self.from_tab)
  end
  if vim.api.nvim_buf_is_valid(self.proposed) then
    vim.api.nvim_buf_delete(self.proposed, { force = true })
  end
end

---@param buf integer
function View:map(buf)
  local keys = config.options.keymaps
  local actions = {
    accept = {
      'accept the hunk under the cursor',
      function()
        self:decide(true)
      end,
    },
    reject = {
      'reject the hunk under the cursor',
      function()
        self:decide(false)
      end,
    },
    accept_all = {
      'accept every undecided hunk',
      function()
        self:decide_rest(true)
      end,
    },
    reject_all = {
      'reject every undecided hunk',
      function()
        self:decide_rest(false)
      end,
    },
    finish = {
      'finish the review (undecided hunks are rejected)',
      function()
        self:finish()
      end,
    },
  }
  for name, action in pairs(actions) do
    vim.keymap.set(
      'n',
      keys[name],
      action[2],
      { buffer = buf, nowait = true, desc = 'agentls: ' .. action[1] }
    )
  end
end

---Open the tab: the real buffer on the left, the proposal on the right, both in diff mode.
function View:open()
  self.from_tab = vim.api.nvim_get_current_tabpage()
  vim.cmd('tabnew')
  self.tab = vim.api.nvim_get_current_tabpage()
  local placeholder = vim.api.nvim_get_current_buf()
  self.left = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(self.left, self.bufnr)
  if placeholder ~= self.bufnr then
    vim.api.nvim_buf_delete(placeholder, { force = true })
  end
  vim.cmd('rightbelow vsplit')
  self.right = vim.api.nvim_get_current_win()
  self.proposed = vim.api.nvim_create_buf(false, true)
  vim.bo[self.proposed].bufhidden = 'wipe'
  local name = workspace_edit.name(self.file.uri)
  -- The tab's name is its window's buffer's: the file's own path, not a shortened URL.
  pcall(vim.api.nvim_buf_set_name, self.proposed, name .. ' (proposed)')
  vim.bo[self.proposed].syntax = vim.bo[self.bufnr].filetype
  vim.api.nvim_win_set_buf(self.right, self.proposed)
  vim.wo[self.left].winbar = ('%s │ current'):format(self.title:gsub('%%', '%%%%'))
  for _, win in ipairs({ self.left, self.right }) do
    vim.api.nvim_win_call(win, function()
      vim.cmd('diffthis')
    end)
  end
  self:map(self.bufnr)
  self:map(self.proposed)
  self:render()
  self:jump(1)
  vim.api.nvim_create_augroup(self.group, { clear = true })
  vim.api.nvim_create_autocmd('WinClosed', {
    group = self.group,
    pattern = { tostring(self.left), tostring(self.right) },
    callback = function()
      vim.schedule(function()
        self:finish()
      end)
    end,
  })
end

local views = 0

---Review `file` (open in `file.bufnr`) in a new tab; `on_done` gets a decision per hunk, or
---nil when the review was withdrawn.
---@param file agentls.FileEdit
---@param title string
---@param encoding string
---@param on_done fun(decisions: boolean[]?)
---@return agentls.ReviewView
function M.open(file, title, encoding, on_done)
  views = views + 1
  local view = setmetatable({
    file = file,
    bufnr = file.bufnr,
    original = vim.api.nvim_buf_get_lines(file.bufnr, 0, -1, false),
    encoding = encoding,
    title = title,
    decisions = {},
    on_done = on_done,
    closed = false,
    group = 'agentls.review.' .. views,
  }, View)
  view:open()
  return view
end

return M
