"""Who decides what a tool call may do: the user's permission rules (allow / ask / deny, in
Claude Code's syntax, `rules.py`), the rules' decision (`decide.py`, reading what a command
line runs with `command_line.py` and `programs.py`), the session's mode (default /
acceptEdits / plan, `modes.py`), and the gate every tool call passes (`gate.py`): the rules,
the hooks' verdict, the mode and the settings weighed, the user asked once through the
`Approver`, and the answer a permit or one typed refusal. Its settings, and the rules a
repository adds, are its own (`settings.py`).

It imports only `shell/command_rules` (how an allow rule matches a command), `interfaces`
(the Approver) and `config/settings` (the rows' machinery); the settings' assembly and the
tools import it, never it a door, the loop or a tool."""
