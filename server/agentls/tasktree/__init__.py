"""A task in a tree of its own: the engine under the batch and the background tasks.

`worktree.py` makes a task's tree (a git worktree of its repository at its base, or a
`--shared` clone), commits what the task changed on a branch and removes the tree;
`spare_trees.py` keeps a warm worker's trees between its tasks; `snapshot.py` takes the base
of a task on the user's own repository (HEAD and the uncommitted changes); `runner.py`
(`TaskRun`) runs one task in its tree headless, with the adapters of a task nobody watches
(`adapters.py`); `environment.py` is the environment of a process that runs tasks. Nothing
here knows of batches, journals, queues or editors: `batch/` and `background/` use it. It
imports `wiring` and what lies below it, never a door nor `background/`
(pyproject.toml's import contracts).
"""
