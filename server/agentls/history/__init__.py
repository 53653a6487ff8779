"""What agentls remembers between tasks: checkpoints of the workspace in a shadow git
repository (`checkpoints.py`), what undo puts back, through an `Editor` (`undo.py`), the
saved sessions of each folder (`sessions.py`), in the private state folders of
`disk/state.py`."""
