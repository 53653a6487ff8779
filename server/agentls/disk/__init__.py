"""The disk, guarded: reading text and writing atomically through folder descriptors with
no symlink followed (`files.py`); the root guard every path of the model passes
(`paths.py`); landing an accepted change for the doors with no editor (`landing.py`); and git
with the repository's program settings off (`safe_git.py`). It imports only the
shared interfaces and `redaction.py`."""
