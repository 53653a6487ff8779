-- The selection sent along with a task, as an LSP Range.
local M = {}

---The range of `:{line1},{line2}Agent`: the visual selection when the command came from
---one (charwise keeps its columns), otherwise whole lines.
---@param line1 integer
---@param line2 integer
---@return agentls.Range
function M.from_command(line1, line2)
  local first, last = vim.fn.getpos("'<"), vim.fn.getpos("'>")
  if vim.fn.visualmode() == 'v' and first[2] == line1 and last[2] == line2 then
    local last_line = vim.fn.getline(line2)
    -- '> is on the last selected character; the range ends after it (a whole character).
    local after = vim.fn.byteidx(last_line, vim.fn.charidx(last_line, last[3] - 1) + 1)
    return { start = { line1, first[3] - 1 }, finish = { line2, after < 0 and #last_line or after } }
  end
  return { start = { line1, 0 }, finish = { line2, #vim.fn.getline(line2) } }
end

---The LSP Range of `range` in `bufnr`, in the client's position encoding.
---@param bufnr integer
---@param range agentls.Range
---@param encoding 'utf-8'|'utf-16'|'utf-32'
---@return lsp.Range
function M.to_lsp(bufnr, range, encoding)
  local function position(row, col)
    local line = row - 1
    return { line = line, character = vim.lsp.util.character_offset(bufnr, line, col, encoding) }
  end
  return {
    start = position(range.start[1], range.start[2]),
    ['end'] = position(range.finish[1], range.finish[2]),
  }
end

return M
