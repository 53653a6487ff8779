"""Background tasks: a task started from an editor (or `agentls run --background`) that runs
in a process of its own, in a git worktree of the user's repository at what the user sees
(HEAD and the uncommitted changes), while the user keeps working; its result is a branch,
reviewed hunk by hunk into the user's files, or discarded.

A background task is a one-task batch on the user's own repository: the tree, the base
(`snapshot.py`), the headless run and the branch are `agentls.tasktree`'s (`runner.TaskRun`),
as a batch's are. What lives here: the records on disk (`records.py`), the
provisioning of a fresh tree (`include.py`), the queue (`slots.py`), the task's process
(`process.py`), starting, cancelling and discarding (`control.py`) and the review's plan
(`review.py`). It imports
`tasktree`, the loop and what lies under it, never a door (so not `batch`); the doors
import it, never the reverse.
"""
