"""The terminal door, `agentls run`: the loop's interfaces for a terminal (`adapters.py`:
edits shown as diffs and written after `y`, commands asked, progress printed), one task or a
conversation at the `agentls>` prompt (`run.py`), and `agentls undo` and `agentls sessions`
(`history_commands.py`). It imports the wiring and the agent, never another door."""
