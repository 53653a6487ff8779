"""Who decides what a tool call may do: the user's permission rules (allow / ask / deny, in
Claude Code's syntax, `rules.py`), the one decision every tool and door consults
(`decide.py`, reading what a command line runs with `command_line.py` and `programs.py`), and
the session's mode (default / acceptEdits / plan, `modes.py`).

Pure decisions over names, arguments and paths: it imports only `shell/command_rules` (how an
allow rule matches a command); `config/` imports it, never a door, the loop or a tool."""
