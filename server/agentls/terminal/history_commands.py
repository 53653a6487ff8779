"""`agentls sessions` and `agentls undo`: what agentls keeps of the current folder, from the
terminal. Undo writes files directly (no editor holds them here) and asks first."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from ..agent.conversation import Conversation
from ..counts import counted
from ..disk import files
from ..history.checkpoints import CheckpointError, ShadowRepository
from ..history.sessions import SessionStore
from ..history.undo import UndoPlan, UndoResult, listing, plan, undo
from ..interfaces import Change, Landed
from ..wiring import new_conversation, resumed_conversation, tell_the_model
from .answers import Answers


class DiskEditor:
    """The undo's editor in a terminal: no file is open, so every file is written here."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def open_text(self, path: Path) -> str | None:
        return None

    async def propose(self, change: Change) -> Landed:
        files.write_atomic(self.root, change.path, change.new_text)
        return Landed(True, change.new_text)

    async def delete(self, path: Path) -> bool:
        files.remove(self.root, path)
        return True


def saved_session(root: Path, resume: str | None, continue_last: bool) -> tuple[Conversation, str]:
    """A new saved session, or the one `--resume ID` names, or with `--continue` this
    folder's last one; and which it is, in words ("" for a new one). Raises KeyError for an
    unknown id."""
    store = SessionStore(root)
    chosen = resume or (store.latest() if continue_last else None)
    if chosen is None:
        return new_conversation(root), ""
    conversation, info = resumed_conversation(store, chosen)
    return conversation, f"Resumed {info.description()}."


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def list_sessions() -> int:
    sessions = SessionStore(Path.cwd()).list_sessions()
    if not sessions:
        print("No saved sessions in this folder.")
    for info in sessions:
        print(f"{info.id}  {_when(info.updated)}  {counted(info.tasks, 'task')}  {info.title}")
    return 0


def _print_checkpoints(repository: ShadowRepository) -> None:
    for item in listing(repository):
        where = f"step {item['step']}: {item['label']}" if item["kind"] == "step" else item["kind"]
        changed = item["files"]
        count = len(changed) if isinstance(changed, list) else 0
        print(
            f"{item['id']:>5}  {_when(float(str(item['time'])))}  {item['task']}  ({where}; "
            f"undo would touch {counted(count, 'file')})"
        )


def _describe(undo_plan: UndoPlan) -> str:
    target = undo_plan.target
    lines = [f"Undo to checkpoint {target.id} ({target.label}, {_when(target.time)}):"]
    for restore in undo_plan.restores:
        lines.append(f"  {'remove' if restore.entry is None else 'put back'}  {restore.path}")
    for path in undo_plan.conflicts:
        lines.append(f"  keep      {path} (changed since by someone else)")
    return "\n".join(lines)


_LOOKED_BACK = 20
"""How many earlier tasks an undo looks through for one that changed files."""


def _undo_plan(repository: ShadowRepository, target: int | None, overwrite: list[str]) -> UndoPlan:
    """The plan for `target`; with none, for the last task, or when it changed nothing, for
    the last one that did (said so), rather than a bare "Nothing to undo"."""
    last = plan(repository, target, overwrite)
    if target is not None or last.restores or last.conflicts:
        return last
    tasks = [c for c in repository.checkpoints() if c.kind == "task"]
    earlier = [c for c in tasks if c.id < last.target.id][-_LOOKED_BACK:]
    for checkpoint in reversed(earlier):
        found = plan(repository, checkpoint.id, overwrite)
        if found.restores:
            print(
                f"The last task ({last.target.label}) changed nothing; the last one that did "
                f"was {found.target.label!r}."
            )
            return found
    return last


def undo_in_terminal(target: int | None, list_only: bool, yes: bool, overwrite: list[str]) -> int:
    root = Path.cwd()
    repository = ShadowRepository(root)
    try:
        if list_only:
            _print_checkpoints(repository)
            return 0
        undo_plan = _undo_plan(repository, target, overwrite)
        print(_describe(undo_plan))
        if not undo_plan.restores:
            print("Nothing to undo.")
            return 1 if undo_plan.conflicts else 0
        if not yes:
            try:
                answer = asyncio.run(_answer("Undo these changes? [y/N] "))
            except KeyboardInterrupt:
                print()
                return 130
            if answer != "y":
                return 1
        result = asyncio.run(
            undo(
                repository,
                DiskEditor(root),
                undo_plan.target.id,
                overwrite,
                undo_plan.target.session,
                undo_plan.target.task,
            )
        )
    except (CheckpointError, OSError) as error:
        print(f"agentls: {error}", file=sys.stderr)
        return 1
    return _report(root, result, None)


async def _answer(question: str) -> str:
    """The answer typed to `question`, "" when no one can answer. Read by the event loop, not
    `input()`: a Ctrl-C that comes between the question and the read would wait for Enter."""
    print(question, end="", flush=True)
    typed = await Answers(sys.stdin.fileno() if sys.stdin else None).text()
    if typed is None:
        print()  # the input ended: a no, and the next line starts on a line of its own
    return (typed or "").strip().lower()


async def undo_last_task(
    root: Path, current: Conversation, ask: Callable[[str], Awaitable[str]]
) -> None:
    """`/undo` in a conversation: the last task's changes undone after a `y`, and the model
    told in the conversation going on."""
    repository = ShadowRepository(root)
    try:
        undo_plan = _undo_plan(repository, None, [])
        print(_describe(undo_plan))
        if not undo_plan.restores:
            print("Nothing to undo.")
            return
        if await ask("Undo these changes? [y/N] ") != "y":
            return
        target = undo_plan.target
        result = await undo(
            repository, DiskEditor(root), target.id, [], target.session, target.task
        )
    except (CheckpointError, OSError) as error:
        print(f"agentls: {error}")
        return
    _report(root, result, current)


def _report(root: Path, result: UndoResult, current: Conversation | None) -> int:
    """What the undo did, and the model told of it; 1 when some files were left."""
    try:
        tell_the_model(result, current or Conversation(), SessionStore(root))
    except OSError as error:  # the files are back; only the note is lost
        print(f"agentls: the undo could not be noted in the session: {error}", file=sys.stderr)
    for path in result.restored:
        print(f"put back  {path}")
    for path in result.removed:
        print(f"removed   {path}")
    for path in result.unrecorded:
        print(f"left      {path} (not recorded: a .gitignore the agent wrote hid it)")
    for path in result.declined:
        print(f"left      {path} ({result.reasons.get(path, 'declined')})")
    # Only a conflict yields to --overwrite; a declined file (a link on the way) does not.
    if result.conflicts:
        print(
            f"Not undone: {', '.join(result.conflicts)}. To put them back anyway: agentls "
            f"undo {result.target.id} --overwrite {' '.join(result.conflicts)}"
        )
    return 1 if result.conflicts or result.declined else 0
