-- :Agent! starts a task in the background while the buffer stays editable; the server tells
-- when it is done; :AgentTasks (vim.ui.select: the task, then Review) reviews its change
-- into the buffer (and deletes the file it deleted), and :AgentUndo takes the review back.
local h = require('harness')

h.main(function()
  h.setup({ review = 'none' })
  vim.cmd.edit('app.py')
  local started = h.events('AgentlsBackgroundStarted')
  local told = h.events('AgentlsBackgroundTask')
  vim.cmd('Agent! set x to 1')
  h.wait('the start', function()
    return #started > 0
  end)
  local editable = vim.bo.modifiable and not require('agentls').is_running()
  h.wait('the task to end', function()
    for _, data in ipairs(told) do
      if data.task.status == 'done' then
        return true
      end
    end
    return false
  end, 60000)
  local buffer_before = vim.api.nvim_buf_get_lines(0, 0, -1, false)

  local shown, offered = {}, {}
  vim.ui.select = function(items, opts, choose)
    if opts.format_item then
      table.insert(shown, opts.format_item(items[1]))
      choose(items[1])
    else
      offered = items
      choose('Review')
    end
  end
  local reviewed = h.events('AgentlsBackgroundReviewed')
  vim.cmd('AgentTasks')
  h.wait('the review', function()
    return #reviewed > 0
  end)
  local buffer_after = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  local old_after_review = vim.uv.fs_stat(vim.fs.joinpath(h.root, 'old.txt')) ~= nil

  local undone = h.events('AgentlsUndoDone')
  vim.cmd('AgentUndo')
  h.wait('the undo', function()
    return #undone > 0
  end)
  local buffer_undone = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  local logs = h.events('AgentlsBackgroundLog')
  require('agentls.background').act(0, { id = started[1].task.id }, 'Open Log')
  h.wait('the log', function()
    return #logs > 0
  end)
  return {
    log = vim.api.nvim_buf_get_lines(logs[1].bufnr, 0, -1, false),
    started = started[1].task,
    editable = editable,
    states = vim.tbl_map(function(data)
      return data.task.status
    end, told),
    buffer_before = buffer_before,
    shown = shown,
    offered = offered,
    review = reviewed[1].result,
    buffer_after = buffer_after,
    old_after_review = old_after_review,
    buffer_undone = buffer_undone,
  }
end)
