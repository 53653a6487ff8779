---@meta
-- LuaCATS annotations of agentls's public API.

---@class agentls.Config
---@field cmd string[] How to start the server (default `{ "agentls" }`).
---@field settings table<string, any> The agentls settings object (see `:help agentls-settings`).
---@field review "diff"|"none" "diff": review every edit before it applies; "none": apply and save at once.
---@field progress "window"|"notify"|"none" How tool steps are shown (LspProgress fires in every case).
---@field root_markers string[] Files that mark the project root; the cwd when none is found.
---@field keymaps agentls.ReviewKeymaps Keys of the review tab.

---@class agentls.ReviewKeymaps
---@field accept string Accept the hunk under the cursor (default `ga`).
---@field reject string Reject the hunk under the cursor (default `gr`).
---@field accept_all string Accept every undecided hunk and finish (default `gA`).
---@field reject_all string Reject every undecided hunk and finish (default `gR`).
---@field finish string Finish; undecided hunks are rejected (default `q`).

---@class agentls.RunOpts
---@field bufnr? integer The buffer the task runs against (0: the current one).
---@field range? agentls.Range The selection that goes along with the task.
---@field images? string[] Image files (absolute paths) the model sees with the task.

---@class agentls.Range
---@field start [integer, integer] (row, col): 1-based row, 0-based byte column.
---@field finish [integer, integer] (row, col), the end, exclusive column.

---@class agentls.TaskResult
---@field status "done"|"cancelled"|"failed"|"step_limit"
---@field summary string
---@field steps integer
---@field edits { applied: integer, rejected: integer }
---@field usage? table<string, number> Tokens over the whole task, as the API reported them.
---@field outcome string The server's line for how it ended, as every front end shows it.

---@class agentls.PlanItem
---@field content string One line: what to do.
---@field status "pending"|"in_progress"|"completed"

---@class agentls.UndoResult The answer of agent.undo (docs/protocol.md).
---@field checkpoint integer The checkpoint the files went back to.
---@field restored string[] Files put back as they were.
---@field outcome string What the undo did, in the server's words.
---@field removed string[] Files created after the checkpoint, removed.
---@field conflicts string[] Files changed since by someone else: left alone.
---@field declined string[] Files the review refused, or that could not be restored.
---@field unrecorded string[] Files a `.gitignore` the agent changed kept out of the record.
