"""`agentls batch`: many tasks, each in a worktree of its own, on a local process pool or a
Ray cluster; a journal that survives the driver; outputs other tools read.

The per-task runner (`worktree.py` makes, provisions, commits and removes a task's tree;
`runner.py` runs one task in it with nobody to ask) knows nothing of batches, so other
doors (background tasks from an editor) reuse it. The driver (`driver.py`) owns the journal
(`journal.py`, the truth), the limits (`limits.py`) and the outputs (`outputs.py`); the
engines run the runner: `pool.py` in local worker processes (`worker.py`), `ray_engine.py`
on a Ray cluster. This folder is a door: it imports `wiring` and what lies below it, never
another door; Ray is imported by `ray_engine.py` alone, and only when asked for.
"""
