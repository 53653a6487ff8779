-- A WorkspaceEdit as the review sees it: per file, its version and its text edits (one per
-- hunk) in document order.
local M = {}

---@class agentls.FileEdit
---@field uri string
---@field version integer? The document version the edits were made for (nil: not open).
---@field edits lsp.TextEdit[] In document order.
---@field labels string[] Per edit, what the user is shown of it: the server's words.
---@field bufnr? integer Its buffer, once the review has loaded it.
---@field decisions? boolean[] Per edit, whether the user accepted it.

---@param edits lsp.TextEdit[]
---@return lsp.TextEdit[]
local function in_document_order(edits)
  table.sort(edits, function(a, b)
    local x, y = a.range.start, b.range.start
    return x.line < y.line or (x.line == y.line and x.character < y.character)
  end)
  return edits
end

---Per edit, its change annotation's label ("hunk 1 of 2: change of lines 3-4", the words
---the model is told), else its number.
---@param edits lsp.TextEdit[]
---@param annotations table<string, lsp.ChangeAnnotation>?
---@return string[]
local function labels(edits, annotations)
  local found = {}
  for i, edit in ipairs(edits) do
    local annotation = edit.annotationId and (annotations or {})[edit.annotationId]
    found[i] = annotation and annotation.label or ('hunk %d of %d'):format(i, #edits)
  end
  return found
end

---The one file `edit` changes (agentls sends one per edit: docs/protocol.md), or nil and
---why it cannot be reviewed. The plugin advertises documentChanges, so the server never
---sends the `changes` form.
---@param edit lsp.WorkspaceEdit
---@return agentls.FileEdit?, string?
function M.file(edit)
  local file = nil
  -- Neovim decodes a JSON null in an object as nil, so absent and null fields look the same.
  for _, change in ipairs(edit.documentChanges or {}) do
    -- A CreateFile needs nothing of its own: the review creates the file when it writes it.
    if change.kind and change.kind ~= 'create' then
      return nil, ('a %s of %s cannot be reviewed'):format(change.kind, change.uri or change.oldUri)
    elseif not change.kind then
      if file then
        return nil, 'an edit of more than one file cannot be reviewed'
      end
      local edits = in_document_order(vim.list_extend({}, change.edits))
      file = {
        uri = change.textDocument.uri,
        version = change.textDocument.version,
        edits = edits,
        labels = labels(edits, edit.changeAnnotations),
      }
    end
  end
  if not file then
    return nil, 'an edit that changes no file cannot be reviewed'
  end
  return file
end

---How a file is named to the user: relative to the project (the agentls server's root)
---when it is inside it, else to the cwd or home.
---@param uri string
---@return string
function M.name(uri)
  local path = vim.uri_to_fname(uri)
  for _, client in ipairs(vim.lsp.get_clients({ name = 'agentls' })) do
    local inside = client.root_dir and vim.fs.relpath(client.root_dir, path)
    if inside then
      return inside
    end
  end
  return vim.fn.fnamemodify(path, ':~:.')
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
  -- A copy: apply_text_edits sorts the list and marks each edit, and the review keeps them.
  vim.lsp.util.apply_text_edits(vim.deepcopy(edits), bufnr, encoding)
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
