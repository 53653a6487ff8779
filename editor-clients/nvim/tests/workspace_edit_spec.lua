-- The review takes what agentls sends (one file per edit, each TextEdit a hunk with the
-- server's label) and refuses what it never sends rather than handling it.
local h = require('harness')

h.main(function()
  local workspace_edit = require('agentls.workspace_edit')
  local function edit(uri, line, text, id)
    return {
      textDocument = { uri = uri, version = 1 },
      edits = {
        {
          range = {
            start = { line = line, character = 0 },
            ['end'] = { line = line + 1, character = 0 },
          },
          newText = text,
          annotationId = id,
        },
      },
    }
  end
  local one = workspace_edit.file({
    documentChanges = { edit('file:///p/a.py', 2, 'x\n', 'a:1') },
    changeAnnotations = { ['a:1'] = { label = 'hunk 1 of 1: change of line 3' } },
  })
  local _, two_files = workspace_edit.file({
    documentChanges = { edit('file:///p/a.py', 0, 'x\n'), edit('file:///p/b.py', 0, 'y\n') },
  })
  local _, renamed = workspace_edit.file({
    documentChanges = { { kind = 'rename', oldUri = 'file:///p/a.py', newUri = 'file:///p/b.py' } },
  })
  local _, nothing = workspace_edit.file({ changes = { ['file:///p/a.py'] = {} } })
  return {
    one = { uri = one.uri, labels = one.labels, edits = #one.edits },
    two_files = two_files,
    renamed = renamed,
    nothing = nothing,
  }
end)
