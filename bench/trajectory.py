"""The scripted work both loops do: the same files, the same model turns."""

from __future__ import annotations

from pathlib import Path

from .api import Turn, reply, text, tool_use

FILE_BYTES = 6 * 1024
ONE_WORD_TASK = "hi"
READ_TASK = "Read every module under src/ and tell me what each one does."
MODEL = "claude-sonnet-4-5"
OPENAI_MODEL = "gpt-4o"


def module_text(number: int, size: int) -> str:
    """Plausible Python source of exactly `size` characters (ASCII, LF endings)."""
    lines = [f'"""Module {number}: arithmetic helpers used by the benchmarks."""', ""]
    function = 0
    while sum(len(line) + 1 for line in lines) < size:
        lines += [
            f"def scale_{number}_{function}(value: float, factor: float = {function}.5) -> float:",
            f'    """Return value scaled by factor, plus the offset {number}."""',
            f"    return value * factor + {number}",
            "",
        ]
        function += 1
    body = "\n".join(lines)
    return body[: size - 1] + "\n"


def make_modules(root: Path, count: int) -> list[str]:
    """`count` 6 KB modules under root/src; their paths relative to root."""
    (root / "src").mkdir(parents=True, exist_ok=True)
    paths = []
    for number in range(count):
        path = f"src/module_{number:02}.py"
        (root / path).write_text(module_text(number, FILE_BYTES))
        paths.append(path)
    return paths


def read_turns(paths: list[str]) -> list[Turn]:
    """One read_file per path, then a final answer: len(paths) tool steps."""
    turns: list[Turn] = [
        reply(tool_use("read_file", {"path": path}, id=f"toolu_read_{n:03}"))
        for n, path in enumerate(paths)
    ]
    turns.append(reply(text(f"Read {len(paths)} modules of arithmetic helpers.")))
    return turns


def greeting_turns() -> list[Turn]:
    return [reply(text("Hello! What should I work on?"))]
