"""The disk, guarded: reading text and writing atomically through folder descriptors with
no symlink followed (`files.py`); the root guard every path of the model passes
(`paths.py`); landing an accepted change for the doors with no editor (`landing.py`); and git
with the repository's program settings off, the one way agentls runs it (`safe_git.py`);
the private folders agentls keeps its state in, and their append-only logs (`state.py`). It
imports the shared interfaces, `redaction.py` and the launcher (`shell/launch.py`)."""
