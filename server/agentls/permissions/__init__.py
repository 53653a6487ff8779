"""Who decides what a tool call may do: the user's permission rules (allow / ask / deny, in
Claude Code's syntax, `rules.py`) and the session's mode (default / acceptEdits / plan,
`modes.py`).

Pure decisions over names, arguments and paths: it imports only `shell/command_rules` (how a
command rule matches); `config/` imports it, never a door, the loop or a tool."""
