"""The settings object, assembled: each part writes its own settings (the rows and the
dataclass of their values, in its `settings.py`: `models/`, `permissions/`, `shell/`,
`extensions/`, `eyes/`, `web/`), and `assembly.py` puts them together into `Settings`, with
those of the parts above the tools' context (`task.py`: the loop, background tasks).
`config/` keeps the machinery (`config/settings.py`) and reads the files and the environment.

It sits above the parts it assembles and under the tools, whose context carries the
settings: the parts import their own settings, never this package (pyproject.toml)."""
