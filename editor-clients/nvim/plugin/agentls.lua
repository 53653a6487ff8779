-- agentls user commands. Everything else loads on first use.
if vim.g.loaded_agentls then
  return
end
vim.g.loaded_agentls = true

local command = vim.api.nvim_create_user_command

command('Agent', function(args)
  local range = nil
  if args.range > 0 then
    range = require('agentls.selection').from_command(args.line1, args.line2)
  end
  -- `-i {file}` (repeatable) attaches an image; the other words are the task.
  local words, images = {}, {}
  local i = 1
  while i <= #args.fargs do
    if args.fargs[i] == '-i' and args.fargs[i + 1] then
      table.insert(images, vim.fn.fnamemodify(vim.fn.expand(args.fargs[i + 1]), ':p'))
      i = i + 2
    else
      table.insert(words, args.fargs[i])
      i = i + 1
    end
  end
  local task = #words > 0 and table.concat(words, ' ') or nil
  if args.bang then -- :Agent! runs it in the background
    if #images > 0 then
      vim.notify(
        'agentls: a background task takes no images; run it without !',
        vim.log.levels.WARN
      )
      return
    end
    return require('agentls.background').start(task, { bufnr = 0, range = range })
  end
  require('agentls').run(task, { bufnr = 0, range = range, images = images })
end, {
  nargs = '*',
  range = true,
  bang = true,
  desc = 'agentls: run a task against the current buffer (! in the background; -i {file} '
    .. 'attaches an image; /name args: a skill or command)',
  complete = function(arglead, cmdline)
    -- After `-i`, a file; a first word starting with `/`, a skill or command.
    if cmdline:sub(1, #cmdline - #arglead):match('%-i%s+$') then
      return vim.fn.getcompletion(arglead, 'file')
    end
    return require('agentls.commands').complete(arglead, cmdline)
  end,
})

command('AgentBackground', function(args)
  local range = nil
  if args.range > 0 then
    range = require('agentls.selection').from_command(args.line1, args.line2)
  end
  local task = args.args ~= '' and args.args or nil
  require('agentls.background').start(task, { bufnr = 0, range = range })
end, {
  nargs = '*',
  range = true,
  desc = 'agentls: run a task in the background',
  complete = function(arglead, cmdline)
    return require('agentls.commands').complete(arglead, cmdline)
  end,
})

command('AgentTasks', function()
  require('agentls.background').pick(0)
end, { desc = 'agentls: the background tasks: review, open the log, cancel, discard' })

command('AgentCancel', function()
  require('agentls').cancel()
end, { desc = 'agentls: cancel the running task' })

command('AgentNew', function()
  require('agentls').new_session()
end, { desc = 'agentls: start a new conversation' })

command('AgentLog', function()
  require('agentls').open_log()
end, { desc = 'agentls: open the transcript' })

command('AgentUndo', function(args)
  local history = require('agentls.history')
  if args.bang then
    history.pick_checkpoint(0)
  else
    history.undo(0, args.args ~= '' and tonumber(args.args) or nil)
  end
end, {
  nargs = '?',
  bang = true,
  desc = 'agentls: undo the last task (or to checkpoint {id}; ! picks a checkpoint)',
})

command('AgentResume', function(args)
  require('agentls.history').resume(0, args.args ~= '' and args.args or nil)
end, { nargs = '?', desc = 'agentls: resume a saved session (picked, or {id})' })

-- When each buffer's diagnostics last changed (its changedtick then), from the start: the
-- agent asks for them once the language servers have caught up with an edit.
vim.api.nvim_create_autocmd('DiagnosticChanged', {
  group = vim.api.nvim_create_augroup('agentls.diagnosed', { clear = true }),
  callback = function(event)
    if vim.api.nvim_buf_is_valid(event.buf) then
      vim.b[event.buf].agentls_diagnosed = vim.b[event.buf].changedtick
    end
  end,
})
