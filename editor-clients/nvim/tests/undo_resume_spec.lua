-- :AgentUndo after a task that edited the open buffer and created a file with bash, then
-- :AgentNew and :AgentResume (vim.ui.select picks the saved session): the next task
-- continues the first conversation.
local h = require('harness')

h.main(function()
  h.setup({ review = 'none' })
  vim.cmd.edit('app.py')
  local first = h.run('change x and make a file')
  local after_task = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  local made_after_task = vim.uv.fs_stat(vim.fs.joinpath(h.root, 'made.txt')) ~= nil

  local undone = h.events('AgentlsUndoDone')
  vim.cmd('AgentUndo')
  h.wait('the undo', function()
    return #undone > 0
  end)
  local buffer = vim.api.nvim_buf_get_lines(0, 0, -1, false)

  local picked = {}
  vim.ui.select = function(items, opts, choose)
    table.insert(picked, opts.format_item(items[1]))
    choose(items[1])
  end
  vim.cmd('AgentNew')
  local resumed = h.events('AgentlsSessionResumed')
  vim.cmd('AgentResume')
  h.wait('the resume', function()
    return #resumed > 0
  end)
  local second = h.run('and now?')
  return {
    first = first.status,
    after_task = after_task,
    made_after_task = made_after_task,
    undo = undone[1].result,
    buffer = buffer,
    modified = vim.bo.modified,
    made_after_undo = vim.uv.fs_stat(vim.fs.joinpath(h.root, 'made.txt')) ~= nil,
    picked = picked,
    resumed = resumed[1].session,
    second = second.status,
  }
end)
