"""agentls's own eyes outside the LSP door: the user's language servers (the `lspServers`
setting, or a built-in default found on PATH), started through the launcher on the first file
of their kind, synced after each edit, their diagnostics awaited for the edit's result.

`definitions` owns the setting's shape, `settings` its row; `connection` speaks JSON-RPC to
one server over its stdio; `session` holds a task's servers and ends them. Imports no door
(pyproject.toml)."""
