"""`agentls batch`: many tasks, each in a worktree of its own, on a local process pool or a
Ray cluster; a journal that survives the driver; outputs other tools read.

Each task runs in `agentls.tasktree` (its tree made, the agent run with nobody to ask,
its result committed, the tree removed), which knows nothing of batches. The driver
(`driver.py`) owns the journal (`journal.py`, the truth), the limits (`limits.py`) and the
outputs (`outputs.py`); the engines run the runner: `pool.py` in local worker processes
(`worker.py`), `ray_engine.py` on a Ray cluster. This folder is a door: it imports
`tasktree`, `wiring` and what lies below them, never another door; Ray is imported by
`ray_engine.py` alone, and only when asked for.
"""
