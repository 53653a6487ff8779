"""The session's mode: what passes without the user, and which tools are offered.

`default`: edits are reviewed, commands ask unless allowed. `acceptEdits`: edits land without
review (still checkpointed, so undo brings them back). `plan`: only the read-only tools, and
`exit_plan_mode`, with which the model puts its plan to the user; approved, the session
switches to `default` and the plan is carried out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .rules import Rule, Rules

Mode = Literal["default", "acceptEdits", "plan"]
MODES: dict[Mode, str] = {
    "default": "Edits are reviewed; commands ask unless a rule allows them.",
    "acceptEdits": "Edits land without review (checkpointed); commands still ask.",
    "plan": "Read-only tools only; the agent ends with a plan for you to approve.",
}
"""Each mode and the line that describes it, the same in every door."""


def mode_of(value: object) -> Mode:
    for mode in MODES:
        if value == mode:
            return mode
    raise ValueError(f"expected one of {', '.join(MODES)}")


@dataclass
class SessionMode:
    """A session's current mode, shared by its door and its tasks' tools: the door switches
    it while the session is idle; an approved plan switches it to `default`."""

    current: Mode = "default"
    kept: Rules = field(default_factory=Rules)
    """The allow rules the user's "always" answers made (`web_fetch(domain:HOST)`): they
    hold for the rest of the session, weighed with the settings' rules."""

    def keep(self, rule: Rule) -> None:
        if rule not in self.kept.allow:
            self.kept = self.kept + Rules(allow=(rule,))
