"""The server process, for the doors that serve an editor (`lsp/`, `acp/`): its log, kept
free of credentials (`logs.py`), and its lifetime (`lifetime.py`): the start (the log, the
signals), loading a front end, and the exit that leaves no shell process behind. It imports
`shell`, `config` and `redaction`, never a door."""
