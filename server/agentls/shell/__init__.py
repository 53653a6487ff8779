"""Running programs: the one launcher every program agentls starts goes through
(`launch.py`); the loop's `Shell` as a subprocess in its own process group
(`subprocess_shell.py`), confined by `sandbox/` (one backend per OS; bubblewrap on Linux);
every group tracked and killed when the server ends (`process_groups.py`, and `guardian.py`,
a separate process, after a SIGKILL); which commands ask first (`command_rules.py`); and long
output cut to its head and tail (`bounded_output.py`); and the shell's settings
(`settings.py`)."""
