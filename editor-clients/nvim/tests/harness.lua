-- Shared by the specs, which run in `nvim --headless --clean -l`: load the plugin from the
-- repository, wait for conditions, press keys, and write a JSON report for pytest (which
-- puts this folder on LUA_PATH, so a spec starts with `require("harness")`).
local M = {}

M.root = assert(vim.env.AGENTLS_ROOT, 'AGENTLS_ROOT is not set')
vim.opt.runtimepath:prepend(assert(vim.env.AGENTLS_PLUGIN, 'AGENTLS_PLUGIN is not set'))
vim.cmd('runtime plugin/agentls.lua')
vim.cmd.cd(M.root)

---setup() with the server command pytest gives, and `opts` over it.
---@param opts? table
function M.setup(opts)
  require('agentls').setup(vim.tbl_deep_extend('force', {
    cmd = vim.json.decode(vim.env.AGENTLS_CMD),
    settings = { approveCommands = 'always' },
    progress = 'window',
  }, opts or {}))
end

---@param what string
---@param condition fun(): boolean
---@param timeout? integer ms
function M.wait(what, condition, timeout)
  if not vim.wait(timeout or 20000, condition, 5) then
    error('timed out waiting for ' .. what, 2)
  end
end

---Type `keys` as the user would (mappings apply).
---@param keys string
function M.keys(keys)
  vim.api.nvim_feedkeys(vim.keycode(keys), 'mx', false)
end

---The data of each `User {pattern}` event, as they fire.
---@param pattern string
---@return table[]
function M.events(pattern)
  local seen = {}
  vim.api.nvim_create_autocmd('User', {
    pattern = pattern,
    callback = function(event)
      table.insert(seen, event.data or {})
    end,
  })
  return seen
end

---Run `task` with :Agent from the current buffer (or as `start` starts it) and wait for
---its result.
---@param task string
---@param during? fun() what the user does while it runs
---@param start? fun() how the user starts it
---@return table result
function M.run(task, during, start)
  local done = M.events('AgentlsTaskDone')
  if start then
    start()
  else
    vim.cmd('Agent ' .. task)
  end
  if during then
    during()
  end
  M.wait('the task to end', function()
    return #done > 0
  end)
  return assert(done[1].result, done[1].error)
end

---@param path string relative to the root
---@return string
function M.read(path)
  return table.concat(vim.fn.readfile(vim.fs.joinpath(M.root, path), 'b'), '\n')
end

---Run the spec: on success write `report()` as JSON to $AGENTLS_REPORT and exit 0; on an
---error print its traceback and exit 1. The servers are stopped either way.
---@param spec fun(): table
function M.main(spec)
  local ok, report = xpcall(spec, debug.traceback)
  for _, client in ipairs(vim.lsp.get_clients()) do
    client:stop()
  end
  vim.wait(5000, function()
    return #vim.lsp.get_clients() == 0
  end, 10)
  if not ok then
    io.stderr:write(tostring(report), '\n')
    os.exit(1)
  end
  local file = assert(io.open(assert(vim.env.AGENTLS_REPORT), 'w'))
  file:write(vim.json.encode(report or vim.empty_dict()))
  file:close()
  os.exit(0)
end

return M
