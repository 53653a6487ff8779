"""`python -m bench [--quick]`: run every measure once and print the table."""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from .api import FakeAnthropic
from .background import BackgroundStart, background_start
from .batch import BatchSpeed, TaskOverhead, batch_speed, task_overhead
from .big_file_edit import HunkCost, hunk_cost
from .big_repos import (
    BigUndo,
    FirstCheckpoint,
    FirstEdit,
    ParallelReads,
    first_checkpoint,
    first_edit,
    idle_memory,
    parallel_reads,
    undo_on,
)
from .checkpoints import CheckpointCost, checkpoint_cost, make_workspace
from .completions import CompletionOverhead, completion_overhead
from .editor import BenchEditor, server_command
from .first_answers import FirstAnswer, time_to_initialize, time_to_prompt
from .mcp_tools import MCP_TOOLS, with_mcp_tools
from .new_tools import new_tools_cost
from .own_servers import OwnServers, own_servers
from .report import (
    Row,
    added_at_most,
    at_least,
    at_most,
    info,
    markdown,
    number,
    ratio_at_most,
    scaled_at_most,
)
from .runs import (
    SETTINGS,
    BigEdit,
    Comparison,
    PrefixCached,
    Soak,
    Startup,
    Trajectory,
    big_edits,
    big_edits_in_own_server,
    compare,
    environment,
    openai_reads,
    soak,
    start_ups,
)
from .sandbox_cost import SandboxCost, sandbox_cost
from .search import GREP_BOUND_SECONDS, STEPS, SearchStep, make_tree, search_steps
from .skills import SKILLS, WithSkills, with_skills
from .streaming import DELTA_CHARS, Streamed, streamed_write
from .subagents import ParallelExplorers, first_prompt_without_subagents, parallel_explorers
from .trajectory import make_modules


@dataclass(frozen=True)
class Plan:
    steps: int = 40
    rounds: int = 3
    soak_tasks: int = 20
    start_ups: int = 15
    edit_bytes: int = 10 * 1024 * 1024
    edits: int = 3
    checkpoint_files: int = 5000
    checkpoints: int = 20
    sandbox_runs: int = 30
    edit_server_of_its_own: bool = True
    """The big edits in a fresh server; in quick mode, in the one the other tasks ran in."""
    tree_files: int = 20_000
    big_tree_files: int = 200_000
    edit_lines: int = 30_000
    """The file of the one-line edit whose hunks are set against difflib's."""
    first_edit_files: tuple[int, int] = (20, 20_000)
    first_checkpoint_files: tuple[int, ...] = (5_000, 20_000)
    undo_files: int = 100_000
    """And the big tree's."""
    streamed_bytes: int = 200_000
    idle_seconds: float = 5.0
    explore_delay: float = 0.5
    """The fake model's wait before each of a subagent's answers."""
    batch_latency: float = 1.0
    """Seconds the fake model waits before each answer in the batch rows."""
    overhead_files: int = 20_000
    background_files: int = 20_000
    """The repository a background task is started on."""
    completion_rounds: int = 40
    """Inline completions measured, after the warm-up ones."""
    completion_model_seconds: float = 0.05
    """The fake completion model's time per answer."""
    warm_edits: int = 10
    """Edits under `-p` after the first, with agentls's own language servers started."""


QUICK = Plan(
    steps=6,
    rounds=1,
    soak_tasks=2,
    start_ups=1,
    edit_bytes=1024 * 1024,
    edits=1,
    checkpoint_files=500,
    checkpoints=3,
    sandbox_runs=3,
    edit_server_of_its_own=False,
    tree_files=1_000,
    big_tree_files=2_000,
    edit_lines=3_000,
    first_edit_files=(20, 200),
    first_checkpoint_files=(300,),
    undo_files=200,
    streamed_bytes=20_000,
    idle_seconds=0.5,
    explore_delay=0.2,
    batch_latency=0.2,
    overhead_files=300,
    background_files=300,
    completion_rounds=5,
    warm_edits=3,
)
"""For the smoke test: every measure, in a fraction of the time; the figures are not the goals'."""


@dataclass(frozen=True)
class Results:
    plan: Plan
    startup: dict[str, Startup]
    prompt: FirstAnswer
    acp: FirstAnswer
    greeting: Comparison
    mcp: Trajectory
    reads: Comparison
    openai: PrefixCached
    soak: Soak
    edit: BigEdit
    sandbox: SandboxCost
    checkpoint: CheckpointCost
    tree_files: int
    search: list[SearchStep]
    big_tree_files: int
    big_search: list[SearchStep]
    hunks: HunkCost
    lines_edit: BigEdit
    first_edits: list[FirstEdit]
    first_checkpoints: list[FirstCheckpoint]
    undos: list[BigUndo]
    streamed: Streamed
    reads_together: ParallelReads
    idle_kib: int
    without_subagents_tokens: int
    """The one-word task's first request with `subagents.maxDepth` 0."""
    explorers: ParallelExplorers
    batch: BatchSpeed
    overhead: TaskOverhead
    skills: WithSkills
    background: BackgroundStart
    completion: CompletionOverhead
    own_servers: OwnServers


async def measure(plan: Plan) -> Results:
    with tempfile.TemporaryDirectory(prefix="agentls-bench-") as temp, FakeAnthropic() as fake:
        home = Path(temp)
        root = home / "workspace"
        paths = make_modules(root, plan.steps)
        env = environment(fake.url, home)
        startup = await start_ups(plan.start_ups, env, root)
        prompt, acp = first_answers(plan.start_ups, env, root)
        editor = BenchEditor(SETTINGS)
        await editor.start(server_command("agentls"), env, root)
        try:
            greeting, reads = await compare(editor, fake, env, root, paths, plan.rounds)
            soaked = await soak(editor, fake, paths, plan.soak_tasks)
            explorers = await parallel_explorers(
                editor, fake, paths, plan.explore_delay, plan.rounds
            )
            shared = None
            if not plan.edit_server_of_its_own:
                shared = await big_edits(editor, fake, root, plan.edit_bytes, plan.edits)
        finally:
            await editor.close()
        mcp = await with_mcp_tools(fake, env, root)
        without_subagents = await first_prompt_without_subagents(fake, env, root)
        edit = shared or await big_edits_in_own_server(fake, env, root, plan.edit_bytes, plan.edits)
        hunks = hunk_cost(plan.edit_lines, 3 * plan.edits)
        # A file of that many lines, of about the bytes they take in source code.
        lines_edit = await big_edits_in_own_server(
            fake, env, root, plan.edit_lines * 70, plan.edits
        )
        openai = await openai_reads(env, root, paths)
        cost = await sandbox_cost(root, plan.sandbox_runs)
        checkpoint = checkpoint_cost(home, plan.checkpoint_files, plan.checkpoints)
        tree = home / "tree"
        files = make_tree(tree, plan.tree_files)
        search = await search_steps(fake, env, tree, plan.rounds, STEPS)
        together = await parallel_reads(fake, env, tree, plan.rounds)
        big_tree = home / "big-tree"
        big_files = make_tree(big_tree, plan.big_tree_files)
        # Once each: a step may take the whole bound.
        big_search = await search_steps(fake, env, big_tree, 1, [STEPS[1], STEPS[-1]])
        first_edits = [
            await first_edit(env, home / f"edited-{n}", n, plan.rounds)
            for n in plan.first_edit_files
        ]
        first_checkpoints = [first_checkpoint(home, n) for n in plan.first_checkpoint_files]
        hundred = home / "undo-tree"
        make_workspace(hundred, plan.undo_files)
        undos = [
            await undo_on(hundred, home / "undo-shadow", plan.undo_files),
            await undo_on(big_tree, home / "big-undo-shadow", big_files),
        ]
        streamed = await streamed_write(plan.streamed_bytes, 3 * plan.rounds)
        idle_kib = await idle_memory(env, root, plan.idle_seconds)
        batch = await batch_speed(home / "batches", env, latency=plan.batch_latency)
        overhead = await task_overhead(
            home / "overhead", env, plan.overhead_files, plan.batch_latency
        )
        skills = await with_skills(fake, env, home / "skills-home", root, paths)
        background = await asyncio.to_thread(
            background_start, home / "background", env, plan.background_files
        )
        completion = await completion_overhead(
            env, root, plan.completion_rounds, plan.completion_model_seconds
        )
        eyes = await own_servers(home / "own-servers", env, plan.warm_edits)
    return Results(
        plan,
        startup,
        prompt,
        acp,
        greeting,
        mcp,
        reads,
        openai,
        soaked,
        edit,
        cost,
        checkpoint,
        files,
        search,
        big_files,
        big_search,
        hunks,
        lines_edit,
        first_edits,
        first_checkpoints,
        undos,
        streamed,
        together,
        idle_kib,
        without_subagents,
        explorers,
        batch,
        overhead,
        skills,
        background,
        completion,
        eyes,
    )


def rows(results: Results) -> list[Row]:
    plan, reads, soaked = results.plan, results.reads, results.soak
    checkpoint = results.checkpoint
    agentls_step = statistics.median(t.seconds_per_step for t in reads.agentls) * 1000
    naive_step = statistics.median(t.seconds_per_step for t in reads.naive) * 1000
    startup = results.startup
    mib = 1024
    return [
        at_most(
            "fixed overhead: input tokens of the first request, one-word task",
            results.greeting.agentls[0].first_prompt_tokens,
            "tokens",
            2000,
            results.greeting.naive[0].first_prompt_tokens,
            "naive",
        ),
        added_at_most(
            "the same: what web_fetch and read_file's images add to it",
            results.greeting.agentls[0].first_prompt_tokens,
            "tokens",
            results.greeting.agentls[0].first_prompt_tokens - new_tools_cost(),
            "without them",
            300,
        ),
        added_at_most(
            # What the MCP tools add: the tools agentls offers of its own have rows of theirs.
            f"fixed overhead with {MCP_TOOLS} MCP tools configured (tool_search)",
            results.mcp.first_prompt_tokens,
            "tokens",
            results.greeting.agentls[0].first_prompt_tokens,
            "no MCP",
            850,
        ),
        added_at_most(
            f"fixed overhead with {SKILLS} skills in the catalog",
            results.skills.first_prompt_tokens,
            "tokens",
            results.greeting.agentls[0].first_prompt_tokens,
            "no skills",
            1500,
        ),
        at_least(
            f"share of the input tokens read from the cache, {results.skills.steps} steps "
            "with skills (a skill loaded, then read_file)",
            results.skills.cache_hit_rate * 100,
            "%",
            90,
        ),
        ratio_at_most(
            f"billed input, {plan.steps} x read_file of 6 KB",
            reads.agentls[0].billed_input,
            "base tokens",
            reads.naive[0].billed_input,
            "naive",
            0.18,
        ),
        info(
            f"billed input, OpenAI format with prefix caching, {plan.steps} x read_file of 6 KB",
            results.openai.billed_input,
            "base tokens",
            results.openai.prompt_tokens,
            "uncached",
        ),
        at_least(
            "the same: share of the input tokens read from the cache",
            results.openai.cache_hit_rate * 100,
            "%",
            90,
        ),
        ratio_at_most(
            "time per tool step, instant model (median of runs)",
            agentls_step,
            "ms",
            naive_step,
            "naive",
            0.5,
        ),
        ratio_at_most(
            "start-up: spawn to initialize answered (median)",
            startup["agentls"].seconds * 1000,
            "ms",
            startup["bare"].seconds * 1000,
            "bare pygls",
            1.3,
        ),
        *first_answer_rows(results.prompt, results.acp),
        info(
            "start-up: CPU time of the server to the initialize answer (median)",
            startup["agentls"].cpu_seconds * 1000,
            "ms",
            startup["bare"].cpu_seconds * 1000,
            "bare pygls",
        ),
        at_most(
            f"one-line edit_file, {results.edit.file_bytes / mib / mib:.0f} MB file open: "
            "WorkspaceEdit on the wire (largest)",
            max(results.edit.wire_bytes),
            "bytes",
            1024,
        ),
        at_most(
            "the same: server time, tool_use reply to applyEdit read (median, upper bound)",
            statistics.median(results.edit.server_seconds) * 1000,
            "ms",
            100,
        ),
        *_line_edit_rows(results.hunks, results.lines_edit),
        info(
            "resident memory after initialize (median)",
            startup["agentls"].resident_kib / mib,
            "MiB",
            startup["bare"].resident_kib / mib,
            "bare pygls",
        ),
        ratio_at_most(
            f"resident memory after {plan.soak_tasks} tasks of {plan.steps} steps "
            "(vs after the first)",
            soaked.resident_kib[-1] / mib,
            "MiB",
            soaked.resident_kib[0] / mib,
            "first task",
            1.1,
        ),
        _first_and_last("soak: time per step", soaked.seconds_per_step),
        _first_and_last("soak: server CPU per step", soaked.cpu_seconds_per_step),
        _sandbox_row(results.sandbox, plan.sandbox_runs),
        info(
            f"first checkpoint of a {checkpoint.files:,}-file workspace",
            checkpoint.first_seconds * 1000,
            "ms",
            None,
            "",
        ),
        at_most(
            f"checkpoint after the first, one file changed (median of {len(checkpoint.seconds)})",
            checkpoint.median * 1000,
            "ms",
            50,
        ),
        info("the same: CPU time, agentls and git", checkpoint.cpu_median * 1000, "ms", None, ""),
        *_subagent_rows(results),
        *(_search_row(step, results.tree_files) for step in results.search),
        *(_big_search_row(step, results.big_tree_files) for step in results.big_search),
        *big_repository_rows(results),
        *batch_rows(results.batch, results.overhead),
        *background_rows(results.background),
        _completion_row(results.completion),
        *own_server_rows(results.own_servers),
    ]


def _completion_row(overhead: CompletionOverhead) -> Row:
    """agentls's own time per inline completion, beside the model's (the ratio column)."""
    return at_most(
        f"inline completion on a {overhead.lines:,}-line buffer: agentls's own time (request "
        f"in, answer out, minus the model's exchange; median of {overhead.rounds} after "
        "warm-up), beside the model's",
        overhead.agentls_ms,
        "ms",
        20,
        overhead.model_ms,
        "the model",
    )


def batch_rows(speed: BatchSpeed, overhead: TaskOverhead) -> list[Row]:
    """`agentls batch`: side by side in one run, the same tasks on 4 workers and on 1."""
    return [
        ratio_at_most(
            f"agentls batch, {speed.tasks} tasks on {speed.workers} workers, model answering "
            f"after {speed.latency:g} s a turn (workers' start included)",
            speed.seconds,
            "s",
            speed.one_worker_seconds,
            "1 worker",
            1 / 3,
        ),
        at_most(
            f"a batch task's start on a {overhead.files:,}-file repository, to its first "
            "request: a warm worker's next task there, at the same base (its tree kept, reset)",
            overhead.next_seconds,
            "s",
            1,
        ),
        info(
            f"the same at another base, {overhead.changed} files away",
            overhead.other_base_seconds,
            "s",
            None,
            "",
        ),
        info(
            "the same: the worker's first task there (a new worktree, every file checked out)",
            overhead.first_seconds,
            "s",
            None,
            "",
        ),
    ]


def own_server_rows(eyes: OwnServers) -> list[Row]:
    """agentls's own language servers under `-p`: side by side in one run, the same edits
    with a server and with none, and the first request with a server found and with none."""
    edits = f"{len(eyes.none.waits)} warm edit_file under -p"
    waited = [
        added_at_most(
            f"{edits}, {server.servers}'s diagnostics awaited in each result: the wait per edit "
            "(median; tool_use to the request with its result)",
            server.wait * 1000,
            "ms",
            eyes.none.wait * 1000,
            "no server",
            1500,
        )
        for server in (eyes.ruff, eyes.pyright)
        if server is not None
    ]
    return [
        *waited,
        added_at_most(
            "input tokens of the first request with a language server found that navigates "
            "(definition, references offered)",
            eyes.navigating_tokens,
            "tokens",
            eyes.none.first_prompt_tokens,
            "none found",
            150,
        ),
    ]


def _subagent_rows(results: Results) -> list[Row]:
    explorers = results.explorers
    return [
        added_at_most(
            "fixed cost of the agent tool (subagents): input tokens of the first request, "
            "one-word task",
            results.greeting.agentls[0].first_prompt_tokens,
            "tokens",
            results.without_subagents_tokens,
            "subagents.maxDepth 0",
            250,
        ),
        ratio_at_most(
            f"2 Explore subagents of one turn ({explorers.slower_turns} and "
            f"{explorers.slower_turns - 1} model turns of {explorers.delay:g} s), beside the "
            f"slower alone (median of {results.plan.rounds})",
            explorers.together_seconds * 1000,
            "ms",
            explorers.slower_alone_seconds * 1000,
            "slower alone",
            1.3,
        ),
    ]


def background_rows(start: BackgroundStart) -> list[Row]:
    """Starting a background task: the editor's wait, and the task's own start after it."""
    return [
        at_most(
            f"starting a background task on a {start.files:,}-file repository with uncommitted "
            f"changes: the answer (base taken, process started; median of {len(start.answers)})",
            start.answer,
            "s",
            1,
        ),
        info(
            "the same: until the task's first request (its process, worktree and agent)",
            start.first_request,
            "s",
            None,
            "",
        ),
    ]


def _line_edit_rows(cost: HunkCost, edit: BigEdit) -> list[Row]:
    """A one-line edit_file in a file of many lines, against difflib over the whole file."""
    difflib_ms = cost.difflib_seconds * 1000
    return [
        ratio_at_most(
            f"one-line edit_file, {cost.lines:,}-line file: hunks and LSP positions (min)",
            cost.agentls_seconds * 1000,
            "ms",
            difflib_ms,
            "difflib, whole file",
            0.25,
        ),
        at_most(
            f"the same, {edit.file_bytes / 1024 / 1024:.1f} MB file open: server time, "
            "tool_use reply to applyEdit read (median)",
            statistics.median(edit.server_seconds) * 1000,
            "ms",
            50,
            difflib_ms,
            "difflib, whole file",
        ),
    ]


def big_repository_rows(results: Results) -> list[Row]:
    small, big = results.first_edits
    rounds, mib = results.plan.rounds, 1024
    stream, together = results.streamed, results.reads_together
    rows = [
        added_at_most(
            f"wait before a task's first edit, {big.files:,}-file workspace, beside "
            f"{small.files} files (median of {rounds}; first request to applyEdit)",
            big.seconds * 1000,
            "ms",
            small.seconds * 1000,
            f"{small.files} files",
            500,
        )
    ]
    for first in results.first_checkpoints:
        baseline = "git add -A && git commit"
        rows += [
            info(
                f"first checkpoint, {first.files:,} files, no git (in the background)",
                first.plain_seconds,
                "s",
                first.git_seconds,
                baseline,
            ),
            ratio_at_most(
                f"first checkpoint, {first.files:,}-file git workspace, from its index",
                first.seeded_seconds,
                "s",
                first.git_seconds,
                baseline,
                0.5,
            ),
        ]
    for done in results.undos:
        row = at_most(
            f"undo of an edit, {done.files:,} files ({'restored' if done.restored else 'NOT'}"
            f"; first checkpoint {done.first_seconds:.0f} s, in the background)",
            done.undo_seconds,
            "s",
            30,
        )
        rows.append(replace(row, passed=row.passed and done.restored))
    size = f"{stream.input_bytes / 1000:.0f} KB write_file"
    rows += [
        ratio_at_most(
            f"{size} streamed in {DELTA_CHARS}-character deltas, beside a minimal reader "
            f"of the same events (min of {3 * rounds})",
            stream.small_deltas * 1000,
            "ms",
            stream.minimal_reader * 1000,
            "minimal reader",
            1.5,
        ),
        info(
            f"the same {size} in {DELTA_CHARS}-character deltas, beside one delta",
            stream.small_deltas * 1000,
            "ms",
            stream.one_delta * 1000,
            "one delta",
        ),
        ratio_at_most(
            f"5 read-only calls in one turn (3 read_file, 2 grep), {results.tree_files:,} "
            f"files, beside the slowest alone (median of {rounds})",
            together.together_seconds * 1000,
            "ms",
            together.slowest_alone_seconds * 1000,
            "slowest alone",
            1.25,
        ),
        info(
            "the same 2 greps by rg alone, side by side, beside the slower alone (median of "
            f"{rounds}): what 2 cores allow",
            together.rg_together_seconds * 1000,
            "ms",
            together.rg_slower_alone_seconds * 1000,
            "slower alone",
        ),
        at_most(
            f"resident memory at idle, {results.plan.idle_seconds:g} s after initialize",
            results.idle_kib / mib,
            "MiB",
            70,
            results.startup["bare"].resident_kib / mib,
            "bare pygls (after initialize)",
        ),
    ]
    return rows


def first_answers(rounds: int, env: dict[str, str], root: Path) -> tuple[FirstAnswer, FirstAnswer]:
    """The `agentls>` prompt and `agentls acp`'s initialize, each in turns with its baseline."""
    return time_to_prompt(rounds, env, root), time_to_initialize(rounds, env, root)


def first_answer_rows(prompt: FirstAnswer, acp: FirstAnswer) -> list[Row]:
    return [
        ratio_at_most(
            "start-up: `agentls run` to the `agentls>` prompt drawn (median)",
            prompt.agentls * 1000,
            "ms",
            prompt.bare * 1000,
            "bare prompt_toolkit prompt",
            1.5,
        ),
        ratio_at_most(
            "start-up: `agentls acp` spawned to initialize answered (median)",
            acp.agentls * 1000,
            "ms",
            acp.bare * 1000,
            "bare ACP SDK agent",
            1.3,
        ),
    ]


def _first_answers_only(plan: Plan) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="agentls-bench-") as temp, FakeAnthropic() as fake:
        home = Path(temp)
        root = home / "workspace"
        root.mkdir()
        return first_answer_rows(*first_answers(plan.start_ups, environment(fake.url, home), root))


def _sandbox_row(cost: SandboxCost, runs: int) -> Row:
    measure = f"bash `true` in the sandbox, side by side with none (median of {runs})"
    if cost.bwrap_ms is not None:
        measure += f"; a bare `bwrap … true` takes {number(cost.bwrap_ms)} ms ({cost.program})"
    if cost.unavailable:
        measure += f": no sandbox here ({cost.unavailable})"
        return info(measure, cost.bare_ms, "ms", None, "")
    return added_at_most(measure, cost.sandboxed_ms, "ms", cost.bare_ms, "no sandbox", 20)


def _answer(step: SearchStep) -> str:
    if step.partial:
        return "partial, said so"
    return "counts as rg's" if step.honest else "counts NOT as rg's"


def _search_row(step: SearchStep, files: int) -> Row:
    return scaled_at_most(
        f"{step.name}, {files:,} files of real source (median; {_answer(step)})",
        step.agentls_seconds * 1000,
        "ms",
        step.ripgrep_seconds * 1000,
        "rg alone",
        1.5,
        150,
        also=step.honest,
    )


def _big_search_row(step: SearchStep, files: int) -> Row:
    row = at_most(
        f"{step.name}, {files:,} files: the step ends within its bound ({_answer(step)})",
        step.agentls_seconds,
        "s",
        GREP_BOUND_SECONDS + 0.5,
        step.ripgrep_seconds,
        "rg alone",
    )
    return replace(row, passed=row.passed and step.honest)


def _first_and_last(measure: str, per_task: list[float]) -> Row:
    """The median of the last tasks against the first ones, milliseconds: flat or not."""
    n = max(1, len(per_task) // 4)
    return ratio_at_most(
        f"{measure}, last {n} tasks (median)",
        statistics.median(per_task[-n:]) * 1000,
        "ms",
        statistics.median(per_task[:n]) * 1000,
        f"first {n}",
        1.25,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer steps and repetitions")
    parser.add_argument(
        "--first-answers",
        action="store_true",
        help="only the rows of the `agentls>` prompt and of `agentls acp`'s initialize",
    )
    arguments = parser.parse_args(argv)
    plan = QUICK if arguments.quick else Plan()
    if arguments.first_answers:
        table = _first_answers_only(plan)
    else:
        table = rows(asyncio.run(measure(plan)))
    command = "python -m bench --quick" if arguments.quick else "python -m bench"
    print(
        f"agentls benchmarks, {datetime.date.today()}, {len(os.sched_getaffinity(0))} cores, "
        f"Python {sys.version.split()[0]}: `{command}`\n"
    )
    print(markdown(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
