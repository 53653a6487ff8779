"""Skills: the first request's fixed cost with 50 skills in the catalog, and the cache over a
40-step task that loads one of them first (the catalog and the skill tool must keep the
prompt's prefix byte-stable)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .api import FakeAnthropic, Turn, first_prompt_tokens, reply, tool_use
from .editor import BenchEditor, server_command
from .runs import SETTINGS
from .trajectory import ONE_WORD_TASK, READ_TASK, greeting_turns, read_turns

SKILLS = 50
_ACTIONS = (
    ("review", "a pull request against the team's checklist"),
    ("deploy", "a service to the staging cluster with the release script"),
    ("migrate", "a database schema with the migration tool and its dry run"),
    ("profile", "a slow endpoint and report the hottest functions"),
    ("document", "a public module in the house style of the API reference"),
)


def _description(number: int) -> str:
    """About 190 characters, as the skills people share run (\"Use when ...\" and what for)."""
    verb, what = _ACTIONS[number % len(_ACTIONS)]
    return (
        f"Use when asked to {verb} {what}; covers variant {number} of the workflow, its "
        f"checks, the commands to run and the mistakes to avoid. Not for other {verb} work."
    )


def make_skills(home: Path, count: int = SKILLS) -> None:
    base = home / ".agents" / "skills"
    for number in range(count):
        name = f"{_ACTIONS[number % len(_ACTIONS)][0]}-{number:02}"
        folder = base / name
        folder.mkdir(parents=True, exist_ok=True)
        body = "\n".join(f"{step}. Step {step} of {name}." for step in range(1, 30))
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {_description(number)}\n---\n{body}\n"
        )


@dataclass(frozen=True)
class WithSkills:
    first_prompt_tokens: int
    cache_hit_rate: float
    """Of the trajectory's input tokens, the share read from the cache."""
    steps: int


def _loading_then_reading(paths: list[str]) -> list[Turn]:
    return [reply(tool_use("skill", {"name": "review-00"}, id="toolu_skill")), *read_turns(paths)]


async def with_skills(
    fake: FakeAnthropic, env: dict[str, str], home: Path, root: Path, paths: list[str]
) -> WithSkills:
    """The one-word task, then a task that loads a skill and reads `paths`, in a server
    whose user has SKILLS skills."""
    make_skills(home)
    editor = BenchEditor(SETTINGS)
    await editor.start(server_command("agentls"), {**env, "HOME": str(home)}, root)
    try:
        fake.reset()
        fake.script(*greeting_turns())
        await editor.run_task(ONE_WORD_TASK)
        first = first_prompt_tokens(fake.requests)
        if "review-00" not in str(fake.requests[0].body["system"]):
            raise RuntimeError("the skills are not in the catalog")
        await editor.new_session()
        fake.reset()
        fake.script(*_loading_then_reading(paths))
        result = await editor.run_task(READ_TASK)
        if result["status"] != "done":
            raise RuntimeError(f"the task with skills failed: {result!r}")
    finally:
        await editor.close()
    billed = fake.billed
    prompt = billed.input + billed.cache_read + billed.cache_write
    return WithSkills(first, billed.cache_read / prompt, len(paths) + 1)
