"""The benchmarks run (quick mode) and print every measure, so they cannot rot."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.bench


def test_quick_bench_prints_every_measure() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--quick"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = {
        line.split(" | ")[0].lstrip("| "): line.split(" | ")
        for line in done.stdout.splitlines()
        if line.startswith("| ") and not line.startswith(("| measure", "| ---"))
    }
    # The wait with pyright's diagnostics has a row where pyright-langserver is on PATH.
    assert len(rows) == 53 + bool(shutil.which("pyright-langserver")), done.stdout
    overhead = rows["fixed overhead: input tokens of the first request, one-word task"]
    assert overhead[-1].strip(" |") == "pass"
    with_mcp = rows["fixed overhead with 100 MCP tools configured (tool_search)"]
    assert with_mcp[-1].strip(" |") == "pass"
    agent_tool = next(cells for name, cells in rows.items() if "fixed cost of the agent" in name)
    assert "(subagents.maxDepth 0)" in agent_tool[2] and agent_tool[-1].strip(" |") == "pass"
    explorers = next(cells for name, cells in rows.items() if "2 Explore subagents" in name)
    assert "(slower alone)" in explorers[2] and explorers[4] == "≤ 1.3x"
    billed = next(cells for name, cells in rows.items() if name.startswith("billed input"))
    assert float(billed[3].rstrip("x")) < 1  # cheaper than the naive loop even on a short run
    wire = next(cells for name, cells in rows.items() if "on the wire" in name)
    assert wire[-1].strip(" |") == "pass"
    sandbox = next(cells for name, cells in rows.items() if "in the sandbox" in name)
    assert "(no sandbox)" in sandbox[2] and sandbox[4] == "≤ +20 ms"
    hunks = next(cells for name, cells in rows.items() if "hunks and LSP positions" in name)
    # A timing: its figure is the bench's to report, not a test's to assert (a loaded machine).
    assert "(difflib, whole file)" in hunks[2] and hunks[4] == "≤ 0.25x"
    found = next(cells for name, cells in rows.items() if "language server found" in name)
    assert "(none found)" in found[2] and found[-1].strip(" |") == "pass"
    ruff = next(cells for name, cells in rows.items() if "ruff's diagnostics" in name)
    assert "(no server)" in ruff[2] and ruff[4] == "≤ +1,500 ms"
    searches = [cells for name, cells in rows.items() if "files of real source" in name]
    assert len(searches) == 5 and all("counts as rg's" in cells[0] for cells in searches)
    assert "`python -m bench --quick`" in done.stdout and "cores" in done.stdout


def test_the_first_answers_rows_run_alone() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--first-answers"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    measures = [line.split(" | ")[0].lstrip("| ") for line in done.stdout.splitlines()[4:]]
    assert measures == [
        "start-up: `agentls run` to the `agentls>` prompt drawn (median)",
        "start-up: `agentls acp` spawned to initialize answered (median)",
    ]
