"""The conversation a session keeps: its messages, shared by consecutive tasks until the
user starts a new one, with what it needs to stay valid for the API (turns that alternate,
every tool call answered) and to be saved as it goes."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from ..interfaces import SAID, Block, CheckpointKind, CheckpointMark, Journal
from .context import ContextBudget

log = logging.getLogger(__name__)

# The result of a tool call that a cancel cut short.
_UNFINISHED_CALL = (
    "Cancelled by the user; this tool call did not finish. If it was an edit under review, "
    "read the file again before relying on its content."
)


def note(text: str, said: str = "") -> Block:
    """A user text block of agentls's own (marked `SAID`), holding the user's words `said`."""
    return {"type": "text", "text": text, SAID: said}


def tool_result(tool_use_id: str, text: str, is_error: bool) -> Block:
    block: Block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": text}
    if is_error:
        block["is_error"] = True
    return block


def text_of(content: list[Block]) -> str:
    return "".join(b.get("text", "") for b in content if b.get("type") == "text").strip()


@dataclass(kw_only=True)
class Conversation:
    """The conversation, shared by consecutive tasks until the user starts a new one."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    budget: ContextBudget = field(default_factory=ContextBudget)
    steering: list[str] = field(default_factory=list)
    """Text the user added to the running task, for the model at the next step."""
    memory_noted: dict[str, str] = field(default_factory=dict)
    """Subfolders' memory files already in the conversation, by label, with their text."""
    journal: Journal | None = None
    """Where the conversation is saved as it goes (None: not saved)."""
    tasks: int = 0
    last_request: str = ""
    """The user's last request, word for word: a compaction keeps it whole."""

    @classmethod
    def resumed(
        cls, messages: list[dict[str, Any]], journal: Journal, tasks: int, last_request: str
    ) -> Conversation:
        """A saved session, to go on with. A server killed during a step left that step's
        tool calls unanswered; the API refuses such a conversation, so they are answered."""
        conversation = cls(
            messages=messages, journal=journal, tasks=tasks, last_request=last_request
        )
        conversation.close_open_tool_calls()
        return conversation

    @property
    def id(self) -> str:
        return self.journal.id if self.journal is not None else ""

    def save(self) -> None:
        """Write what changed since the last save; a full disk must not stop the task."""
        if self.journal is not None:
            try:
                self.journal.sync(self.messages)
            except OSError as error:
                log.warning("the session could not be saved: %s", error)

    def begin_task(self, request: str) -> str:
        """Count a task in; its title (the request's first line) for lists and checkpoints."""
        self.tasks += 1
        self.last_request = request
        title = (request.strip().splitlines() or [""])[0][:80]
        if self.journal is not None:
            try:
                self.journal.task(title, request)
            except OSError as error:
                log.warning("the session could not be saved: %s", error)
        return title

    def mark(
        self, kind: CheckpointKind, step: int | None, label: str, touches: list[str] | None = None
    ) -> CheckpointMark:
        """Where a checkpoint of the files taken now stands: this session, its current task."""
        return CheckpointMark(
            kind=kind, session=self.id, task=self.tasks, step=step, label=label, touches=touches
        )

    def add_user(self, blocks: list[Block]) -> None:
        # A task cancelled before the model answered leaves a user message last; the API
        # wants turns to alternate, so the next one joins it.
        if self.messages and self.messages[-1]["role"] == "user":
            self.messages[-1]["content"].extend(blocks)
        else:
            self.messages.append({"role": "user", "content": blocks})

    def checkpoint(self) -> tuple[int, int]:
        """Where the conversation stands: the number of messages, and of blocks in the last."""
        return len(self.messages), len(self.messages[-1]["content"]) if self.messages else 0

    def rewind(self, checkpoint: tuple[int, int]) -> None:
        count, blocks = checkpoint
        del self.messages[count:]
        if self.messages:
            del self.messages[-1]["content"][blocks:]

    def close_open_tool_calls(self) -> None:
        """Answer the tool calls of the last assistant turn that have no result yet.

        A task that ends early (cancelled, failed) leaves them; the API refuses a conversation
        with unanswered calls, so the next task needs them answered.
        """
        messages = self.messages
        if messages and messages[-1]["role"] == "assistant":
            self.add_user([])
        if len(messages) < 2 or messages[-2]["role"] != "assistant":
            return
        answered = {b.get("tool_use_id") for b in messages[-1]["content"]}
        calls = [b for b in messages[-2]["content"] if b.get("type") == "tool_use"]
        messages[-1]["content"].extend(
            tool_result(c["id"], _UNFINISHED_CALL, True) for c in calls if c["id"] not in answered
        )
        if not messages[-1]["content"]:
            messages.pop()
