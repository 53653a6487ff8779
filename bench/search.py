"""grep and list_files on big trees of real source, side by side with ripgrep alone.

The tree is copies of this Python's standard library: the first copy is copied, the others
are hard links to it, so that 200,000 files take seconds to make and no more disk than one
copy; ripgrep and agentls still open and read every one of them.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.tools.search import ripgrep

from .api import FakeAnthropic, reply, text, tool_use
from .editor import BenchEditor, server_command
from .runs import SETTINGS

GREP_BOUND_SECONDS = 10.0
"""The bound of one grep or list_files step (tools/search_tools.py, GREP_SECONDS)."""

# (name, tool input, the same search with rg alone)
STEPS: list[tuple[str, dict[str, Any], list[str]]] = [
    ("grep a rare literal", {"pattern": "class HTTPConnection"}, ["-e", "class HTTPConnection"]),
    ("grep a common regex", {"pattern": r"def __\w+__\(self"}, ["-e", r"def __\w+__\(self"]),
    (
        "grep, ignore_case, *.py",
        {"pattern": "xmlparser", "ignore_case": True, "glob": "*.py"},
        ["-i", "-g", "*.py", "-e", "xmlparser"],
    ),
    (
        "grep, files output",
        {"pattern": "import re$", "output": "files"},
        ["-l", "-e", "import re$"],
    ),
    ("list_files", {}, ["--files"]),
]


def stdlib_sources() -> list[Path]:
    base = Path(sysconfig.get_paths()["stdlib"])
    return sorted(
        path
        for path in base.rglob("*.py")
        if not {"site-packages", "dist-packages"} & set(path.parts) and path.is_file()
    )


def make_tree(root: Path, files: int) -> int:
    """Copies of the standard library's .py files under `root` until there are at least
    `files`; how many there are."""
    sources = stdlib_sources()
    base = Path(sysconfig.get_paths()["stdlib"])
    first = root / "copy000"
    for source in sources:
        target = first / source.relative_to(base)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    made = len(sources)
    copy = 1
    while made < files:
        for source in sources:
            relative = source.relative_to(base)
            target = root / f"copy{copy:03}" / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(first / relative, target)
        made += len(sources)
        copy += 1
    return made


def ripgrep_alone(root: Path, arguments: list[str]) -> tuple[float, int]:
    """Seconds for the rg agentls runs, as a user would run it (its output read from a pipe),
    and how many lines it printed."""
    started = time.monotonic()
    done = subprocess.run(
        [ripgrep.binary() or "rg", "--no-config", *arguments], cwd=root, capture_output=True
    )
    return time.monotonic() - started, done.stdout.count(b"\n")


_TOTAL = re.compile(
    r"^\[(?:stopped at .* bound before every file was searched: )?(\d+) "
    r"(?:match(?:es)? in (\d+) files?|files)",
    re.M,
)


def counted(answer: str, files: bool) -> int:
    """How many matches (or files) an answer says there are: its count when it is cut, else
    its lines."""
    total = _TOTAL.search(answer)
    if total is not None:
        return int(total.group(2) if files and total.group(2) else total.group(1))
    return 0 if answer == "No matches." else len(answer.splitlines())


@dataclass(frozen=True)
class SearchStep:
    name: str
    agentls_seconds: float
    ripgrep_seconds: float
    answer: str
    ripgrep_lines: int

    @property
    def partial(self) -> bool:
        return "s bound before every file was searched" in self.answer

    @property
    def honest(self) -> bool:
        """A partial answer says so; a complete one counts what rg alone found."""
        files = self.name == "list_files" or "files output" in self.name
        return self.partial or counted(self.answer, files) == self.ripgrep_lines


async def _agentls_step(
    editor: BenchEditor, fake: FakeAnthropic, tool: str, arguments: dict[str, Any]
) -> tuple[float, str]:
    """The step's time as the fake saw it (its tool_use reply to the request with the result:
    an upper bound that holds the SDK's work and the pipes too), and the tool's answer."""
    fake.reset()
    fake.script(reply(tool_use(tool, arguments)), reply(text("Found.")))
    await editor.run_task(f"{tool} please")
    await editor.new_session()
    first, second = fake.requests[0], fake.requests[1]
    result = second.body["messages"][-1]["content"][-1]
    return second.received - first.received, str(result["content"])


async def search_steps(
    fake: FakeAnthropic,
    env: dict[str, str],
    root: Path,
    rounds: int,
    steps_to_run: list[tuple[str, dict[str, Any], list[str]]],
) -> list[SearchStep]:
    """Each step, agentls and rg alone in turn, medians of `rounds` runs."""
    editor = BenchEditor(SETTINGS)
    await editor.start(server_command("agentls"), env, root)
    steps = []
    try:
        # A first task pays the SDK's one-time set-up, no part of a search's cost.
        await _agentls_step(editor, fake, "list_files", {"path": "copy000/json"})
        for name, arguments, alone in steps_to_run:
            tool = "list_files" if name == "list_files" else "grep"
            ours, theirs, answer, lines = [], [], "", 0
            for _ in range(rounds):
                seconds, lines = ripgrep_alone(root, alone)
                theirs.append(seconds)
                seconds, answer = await _agentls_step(editor, fake, tool, arguments)
                ours.append(seconds)
            steps.append(
                SearchStep(name, statistics.median(ours), statistics.median(theirs), answer, lines)
            )
    finally:
        await editor.close()
    return steps
