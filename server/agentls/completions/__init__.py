"""Inline completions and next-edit suggestions: the engine under the LSP door.

`settings` owns the `completions` setting's shape; `route` chooses where a request goes (the
profile, endpoint, key and fill-in-the-middle wire); `privacy` decides which documents may
feed a prompt and redacts it; `window` cuts the prompt at the cursor; `wire` speaks each
model's HTTP format over one pooled client; `engine` debounces, supersedes and cancels the
requests of each document. It imports no door (pyproject.toml's import contracts): the LSP
door (`lsp/inline.py`) turns its answers into positions and protocol types."""
