-- A WorkspaceEdit as the review sees it: per file, its version, whether it is created, and
-- its text edits (one per hunk) with their labels.
local M = {}

---@class agentls.FileEdit
---@field uri string
---@field version integer? The document version the edits were made for (nil: not open).
---@field create boolean A CreateFile came first: the file may not exist yet.
---@field edits lsp.TextEdit[] In document order.
---@field labels string[] One per edit: its change annotation's label, or "hunk i of n".
---@field bufnr? integer Its buffer, once the review has loaded it.
---@field decisions? boolean[] Per edit, whether the user accepted it.

---@param value any
---@return any
local function present(value)
  if value == vim.NIL then
    return nil
  end
  return value
end

---@param edit lsp.WorkspaceEdit
---@param file agentls.FileEdit
local function label_hunks(edit, file)
  local annotations = present(edit.changeAnnotations) or {}
  table.sort(file.edits, function(a, b)
    local x, y = a.range.start, b.range.start
    return x.line < y.line or (x.line == y.line and x.character < y.character)
  end)
  for i, text_edit in ipairs(file.edits) do
    local annotation = annotations[text_edit.annotationId or '']
    file.labels[i] = annotation and annotation.label or ('hunk %d of %d'):format(i, #file.edits)
  end
end

---The files `edit` changes, or nil and why it cannot be reviewed.
---@param edit lsp.WorkspaceEdit
---@return agentls.FileEdit[]?, string?
function M.files(edit)
  local files, created = {}, {}
  for _, change in ipairs(present(edit.documentChanges) or {}) do
    if change.kind == 'create' then
      created[change.uri] = true
    elseif change.kind then
      return nil, ('a %s of %s cannot be reviewed'):format(change.kind, change.uri or change.oldUri)
    else
      local uri = change.textDocument.uri
      table.insert(files, {
        uri = uri,
        version = present(change.textDocument.version),
        create = created[uri] or false,
        edits = vim.list_extend({}, change.edits),
        labels = {},
      })
    end
  end
  for uri, edits in pairs(present(edit.changes) or {}) do
    table.insert(
      files,
      { uri = uri, create = false, edits = vim.list_extend({}, edits), labels = {} }
    )
  end
  for _, file in ipairs(files) do
    label_hunks(edit, file)
  end
  return files
end

---Where each edit sits: its first row (0-based) and row count, before and after it applies.
---With `kept[i] == false` edit i is shown unapplied, so later rows shift by what is kept.
---@param edits lsp.TextEdit[]
---@param kept (boolean?)[]
---@return { old: [integer, integer], new: [integer, integer] }[]
function M.extents(edits, kept)
  local extents, shift = {}, 0
  for i, edit in ipairs(edits) do
    local first, last = edit.range.start.line, edit.range['end'].line
    local old_rows = last - first + (edit.range['end'].character > 0 and 1 or 0)
    local _, newlines = edit.newText:gsub('\n', '')
    local new_rows = newlines + ((edit.newText ~= '' and edit.newText:sub(-1) ~= '\n') and 1 or 0)
    local shown = kept[i] == false and old_rows or new_rows
    extents[i] = { old = { first, old_rows }, new = { first + shift, shown } }
    shift = shift + shown - old_rows
  end
  return extents
end

---Apply `edits` to `bufnr`. An empty buffer still holds one empty line, which stands for
---no text at all: text inserted there that ends with a newline must not keep it as well.
---@param edits lsp.TextEdit[]
---@param bufnr integer
---@param encoding string
function M.apply(edits, bufnr, encoding)
  local was_empty = vim.api.nvim_buf_line_count(bufnr) == 1
    and vim.api.nvim_buf_get_lines(bufnr, 0, 1, false)[1] == ''
  vim.lsp.util.apply_text_edits(edits, bufnr, encoding)
  local count = vim.api.nvim_buf_line_count(bufnr)
  if
    was_empty
    and count > 1
    and vim.api.nvim_buf_get_lines(bufnr, count - 1, count, false)[1] == ''
  then
    vim.api.nvim_buf_set_lines(bufnr, count - 1, count, false, {})
  end
end

return M
