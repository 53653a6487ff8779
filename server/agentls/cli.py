"""The `agentls` command: serve LSP (stdio or TCP), or run tasks in the terminal."""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import __version__
from .permissions.modes import MODES


def _max_steps(text: str) -> int:
    """`--max-steps`, held to the range of the maxSteps setting."""
    from .config.settings import checked

    try:
        steps: int = checked("maxSteps", int(text) if text.lstrip("-").isdigit() else text)
        return steps
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _task(text: str) -> str:
    """The task: not blank, which the API would refuse as an empty message."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "say what the agent should do, or leave the task out for a conversation"
        )
    return text


def _provider(text: str) -> str:
    """`--provider`, one of the agentls.provider setting's values."""
    from .config.settings import checked

    try:
        return str(checked("provider", text))
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentls", description="A coding agent served to editors over LSP."
    )
    parser.add_argument("--version", action="version", version=f"agentls {__version__}")
    parser.add_argument("--tcp", action="store_true", help="serve on TCP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="TCP host (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=2087, help="TCP port (default 2087)")
    parser.add_argument("--log-file", help="write the server's log to this file")
    commands = parser.add_subparsers(dest="command")
    run = commands.add_parser(
        "run", help="run a task in the current directory; with none, a conversation"
    )
    run.add_argument(
        "task",
        nargs="?",
        type=_task,
        help="what the agent should do (none: type tasks one by one)",
    )
    run.add_argument("--yes", action="store_true", help="apply every edit and run every command")
    run.add_argument(
        "-i",
        "--image",
        dest="images",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="attach an image (PNG, JPEG, GIF, WebP) to the first task; repeatable "
        "(in a line, @path/to/shot.png attaches one too)",
    )
    run.add_argument(
        "-p",
        "--print",
        dest="print_task",
        type=_task,
        metavar="TASK",
        help="run TASK for a script: nobody is asked (edits and commands only with --yes)",
    )
    run.add_argument(
        "--output-format",
        choices=["text", "json", "stream-json"],
        help="with -p: the final answer (text, the default), one JSON object at the end "
        "(json), or one JSON object per line per event (stream-json)",
    )
    run.add_argument(
        "--provider",
        type=_provider,
        help="where the model runs: anthropic, openai or a profile (default: AGENTLS_PROVIDER)",
    )
    run.add_argument("--model", help="model id (default: AGENTLS_MODEL or a current Sonnet)")
    run.add_argument("--max-steps", type=_max_steps, help="stop after this many model turns")
    run.add_argument(
        "--sandbox",
        choices=["auto", "required", "off"],
        help="run bash in a sandbox: where one works (auto, the default), always, or never",
    )
    run.add_argument(
        "--sandbox-network",
        action="store_true",
        default=None,
        help="let sandboxed commands reach the network",
    )
    run.add_argument(
        "--background",
        action="store_true",
        help="run TASK in a worktree of its own, in the background: prints its id and "
        "returns (see agentls tasks)",
    )
    run.add_argument(
        "--mode",
        choices=list(MODES),
        help="the session's mode: default, acceptEdits (edits land unreviewed) or plan "
        "(read-only until you approve a plan); /mode switches it in a conversation",
    )
    commands.add_parser(
        "acp", help="serve the Agent Client Protocol on stdio (Zed, JetBrains, agent-shell, ...)"
    )
    resume = run.add_mutually_exclusive_group()
    resume.add_argument(
        "--continue",
        dest="continue_last",
        action="store_true",
        help="go on with this folder's last session",
    )
    resume.add_argument("--resume", metavar="ID", help="go on with a saved session")
    _batch_parser(commands)
    commands.add_parser("sessions", help="list this folder's saved sessions, newest first")
    tasks = commands.add_parser("tasks", help="this folder's background tasks: list, review")
    task_commands = tasks.add_subparsers(dest="tasks_command")
    for name, words in (
        ("review", "put the task's change to you, hunk by hunk"),
        ("cancel", "stop a task that runs or waits"),
        ("discard", "remove the task, its worktree and its branch"),
    ):
        one = task_commands.add_parser(name, help=words)
        one.add_argument("id", help="the task's id (agentls tasks lists them)")
        if name == "review":
            one.add_argument("--yes", action="store_true", help="accept every hunk")
    mcp = commands.add_parser(
        "mcp", help="the MCP servers: list them, sign in, approve a project's"
    )
    mcp_commands = mcp.add_subparsers(dest="mcp_command", required=True)
    mcp_commands.add_parser("list", help="each server, its state and tools, or why it failed")
    mcp_commands.add_parser("resources", help="the resources each server offers")
    login = mcp_commands.add_parser("login", help="sign in to an HTTP server (its browser page)")
    login.add_argument("name", help="the server's name")
    logout = mcp_commands.add_parser("logout", help="forget the tokens of an HTTP server")
    logout.add_argument("name", help="the server's name")
    approve = mcp_commands.add_parser("approve", help="let this project's .mcp.json server run")
    approve.add_argument("name", help="the server's name in .mcp.json")
    hooks = commands.add_parser("hooks", help="the hooks of this project's .agentls/settings.json")
    hooks_commands = hooks.add_subparsers(dest="hooks_command", required=True)
    hooks_commands.add_parser("approve", help="let the project's hooks run, as defined now")
    skills = commands.add_parser(
        "skills", help="the skills and commands found here, from where, what was skipped"
    )
    skills_commands = skills.add_subparsers(dest="skills_command")
    skills_commands.add_parser(
        "approve", help="let the project's skills and commands in, as they are now"
    )
    plugin = commands.add_parser("plugin", help="your plugins: add, list, remove")
    plugin_commands = plugin.add_subparsers(dest="plugin_command", required=True)
    plugin_commands.add_parser("add", help="add a plugin folder").add_argument("path")
    plugin_commands.add_parser("list", help="the plugins you added")
    plugin_commands.add_parser("remove", help="forget a plugin").add_argument("name")
    undo = commands.add_parser(
        "undo", help="undo the agent's changes back to a checkpoint (default: the last task)"
    )
    undo.add_argument("id", nargs="?", type=int, help="the checkpoint (see --list)")
    undo.add_argument("--list", action="store_true", help="list the checkpoints, newest first")
    undo.add_argument("--yes", action="store_true", help="do not ask before changing files")
    undo.add_argument(
        "--overwrite",
        nargs="+",
        default=[],
        metavar="PATH",
        help="put these files back even though they changed since",
    )
    check = commands.add_parser(
        "check-settings", help="check an agentls settings object (JSON) as the server would"
    )
    check.add_argument("settings", help='the object under "agentls", e.g. \'{"maxSteps": 20}\'')
    model = commands.add_parser(
        "check-model",
        help="say which model, endpoint and key variable these settings (JSON) would use",
    )
    model.add_argument(
        "settings", help='the object under "agentls", e.g. \'{"provider": "ollama"}\''
    )
    return parser


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError("a whole number, 1 or more")
    return int(text)


def _batch_parser(commands: Any) -> None:
    batch = commands.add_parser(
        "batch",
        help="run many tasks (JSONL), each in a git worktree, on local workers or Ray",
        description="Run each task of TASKS (one JSON object a line: id, repo, prompt; "
        "optional base, setup, test, max_steps, timeout) in a worktree of its own, nobody "
        "asked; results in OUT (docs/batch.md). Run it again to go on where it stopped.",
    )
    batch.add_argument("tasks", type=Path, help="the tasks file (JSONL)")
    batch.add_argument("-o", "--out", type=Path, required=True, help="the results folder")
    batch.add_argument("--name", help="the batch's name in its branches (default: OUT's name)")
    batch.add_argument(
        "--workers", type=_positive_int, help="local worker processes (default: the cores)"
    )
    batch.add_argument(
        "--ray",
        metavar="auto|ADDRESS",
        help="run on a Ray cluster instead (pip install 'agentls[ray]')",
    )
    batch.add_argument(
        "--max-in-flight", type=_positive_int, help="tasks at once (default: workers or slots)"
    )
    batch.add_argument("--budget", type=float, metavar="USD", help="stop starting tasks once spent")
    batch.add_argument(
        "--retries",
        type=int,
        default=2,
        help="retries of a task whose worker or node died (default 2)",
    )
    batch.add_argument(
        "--retry-failed", action="store_true", help="run failed, error and timeout tasks again"
    )
    batch.add_argument(
        "--sandbox-network", action="store_true", help="let sandboxed commands reach the network"
    )
    batch.add_argument(
        "--shared",
        action="store_true",
        help="a `git clone --shared` per task instead of a worktree",
    )
    batch.add_argument("--keep-worktrees", action="store_true", help="leave each task's tree")
    batch.add_argument("--worktrees", type=Path, help="where the trees go (default OUT/worktrees)")
    batch.add_argument(
        "--fresh-workers",
        action="store_true",
        help="a new worker process per task (default: warm workers)",
    )
    batch.add_argument("--provider", type=_provider, help="as for agentls run")
    batch.add_argument("--model", help="as for agentls run")


def _batch(arguments: argparse.Namespace) -> int:
    import asyncio

    from .batch.driver import BatchOptions, run_batch

    options = BatchOptions(
        arguments.tasks,
        arguments.out,
        arguments.name,
        arguments.workers,
        arguments.ray,
        arguments.max_in_flight,
        arguments.budget,
        max(0, arguments.retries),
        arguments.retry_failed,
        arguments.sandbox_network,
        arguments.shared,
        arguments.keep_worktrees,
        arguments.worktrees,
        arguments.provider,
        arguments.model,
        1 if arguments.fresh_workers else 0,
    )
    return asyncio.run(run_batch(options))


def check_settings(raw: str) -> int:
    """Print each problem the server would warn about; exit status 1 when there is one."""
    from .config.settings import parse

    try:
        value = json.loads(raw)
    except json.JSONDecodeError as error:
        print(f"agentls settings are not JSON: {error}")
        return 1
    _, problems = parse(value)
    for problem in problems:
        print(problem)
    if not problems:
        print("agentls settings are valid")
    return 1 if problems else 0


def check_model(raw: str) -> int:
    """Print the model and endpoint a task would use (never the key), or why there is none;
    exit status 1 then; and what a local server says will not work (tools its chat template
    drops). The workspace does not matter: only the user's sources configure it."""
    import asyncio
    from pathlib import Path

    from .config import environment
    from .config.settings import parse
    from .interfaces import ModelError
    from .models import capabilities, providers

    try:
        settings, _ = parse(json.loads(raw))
    except json.JSONDecodeError as error:
        print(f"agentls settings are not JSON: {error}")
        return 1
    env = environment.load(Path.cwd()).client
    try:
        endpoint = providers.endpoint(settings.provider, settings.base_url, env)
        model = providers.model_id(endpoint.profile, settings.model, env)
    except ModelError as error:
        print(f"{error} {error.hint}")
        return 1
    print(providers.describe(endpoint, model))
    window = settings.context_window or providers.context_window(model, endpoint.profile.wire)
    try:
        for warning in asyncio.run(capabilities.warnings(endpoint, model, window)):
            print(f"warning: {warning}")
    except capabilities.NotAsked as why:
        print(f"Could not ask {endpoint.shown_url} what it supports ({why}).")
    return 0


def _new_conversation_at_a_terminal(arguments: argparse.Namespace) -> bool:
    """`agentls run` with no task, typed at a terminal that draws a prompt (not a pipe, not a
    dumb one such as Emacs's shell), for a new conversation."""
    if arguments.task or arguments.print_task or arguments.output_format:
        return False
    if arguments.resume or arguments.continue_last:
        return False  # which conversation is said first, and an unknown one refused
    tty = sys.stdin is not None and sys.stdin.isatty() and sys.stdout.isatty()
    return tty and os.environ.get("TERM", "") not in ("", "dumb", "unknown")


def _converse(arguments: argparse.Namespace) -> int:
    """A new conversation whose first prompt is drawn at once: agentls and the model's SDK
    load while the first line is typed (`terminal/first_prompt.py`)."""
    import asyncio

    from .terminal.first_prompt import LoadFailed, first_line
    from .terminal.prompt import WELCOME

    def load() -> Any:  # in the loading thread
        from .terminal import history_commands  # noqa: F401 (loaded here, used below)
        from .terminal.run import Flags, prepare_conversation

        return prepare_conversation(
            Flags(
                arguments.yes,
                arguments.provider,
                arguments.model,
                arguments.max_steps,
                arguments.sandbox,
                arguments.sandbox_network,
                arguments.mode,
            )
        )

    try:
        first = asyncio.run(first_line(WELCOME.format(root=Path.cwd()), load))
    except LoadFailed as error:
        print(f"agentls: {error}")
        return 1
    if first is None:  # Ctrl-D
        print()
        return 0
    from .terminal.history_commands import saved_session
    from .terminal.run import RunOptions, Started, go_on

    for line in first.loaded.said:  # not shown yet: the line was typed first
        print(line)
    session, _ = saved_session(Path.cwd(), None, False)
    started = Started(first.line, first.loaded.value)
    images = tuple(path.absolute() for path in arguments.images)  # for the first line's task
    return go_on(started, RunOptions(arguments.yes, None, "", images), session)


def _run(arguments: argparse.Namespace) -> int:
    if _new_conversation_at_a_terminal(arguments):
        return _converse(arguments)
    from .terminal.history_commands import saved_session
    from .terminal.run import RunOptions, run_in_terminal

    task = arguments.print_task or arguments.task
    if arguments.background:
        from .terminal.background_commands import start

        if arguments.task is None or arguments.print_task is not None:
            print("agentls: --background takes a task: agentls run --background TASK")
            return 2
        return start(arguments.task, arguments.provider, arguments.model, arguments.max_steps)
    if arguments.print_task and arguments.task:
        print("agentls: give the task once: as -p TASK or as the argument", file=sys.stderr)
        return 2
    try:
        session, resumed = saved_session(Path.cwd(), arguments.resume, arguments.continue_last)
    except KeyError:
        print(f"agentls: no saved session {arguments.resume!r} here (see `agentls sessions`)")
        return 1
    headless = arguments.print_task is not None or arguments.output_format is not None
    if headless and task is None:
        print("agentls: --output-format needs a task: agentls run -p TASK", file=sys.stderr)
        return 2
    options = RunOptions(
        arguments.yes,
        (arguments.output_format or "text") if headless else None,
        resumed,
        tuple(path.absolute() for path in arguments.images),
    )
    return run_in_terminal(
        task,
        options,
        arguments.provider,
        arguments.model,
        arguments.max_steps,
        arguments.sandbox,
        arguments.sandbox_network,
        session,
        arguments.mode,
    )


def main(argv: list[str] | None = None) -> int:
    arguments = _parser().parse_args(argv)
    if arguments.command == "run":
        try:
            return _run(arguments)
        except KeyboardInterrupt:  # Ctrl-C while starting: nothing had begun
            print()
            return 130
    if arguments.command == "batch":
        return _batch(arguments)
    if arguments.command in ("mcp", "hooks"):
        from .terminal import mcp_commands

        if arguments.command == "hooks":
            return mcp_commands.approve("hooks", "project")
        if arguments.mcp_command == "list":
            return mcp_commands.list_servers()
        if arguments.mcp_command == "resources":
            return mcp_commands.list_resources()
        if arguments.mcp_command == "login":
            return mcp_commands.login(arguments.name)
        if arguments.mcp_command == "logout":
            return mcp_commands.logout(arguments.name)
        return mcp_commands.approve("mcp", arguments.name)
    if arguments.command in ("skills", "plugin"):
        from .terminal import skill_commands

        if arguments.command == "plugin":
            target = getattr(arguments, "path", None) or getattr(arguments, "name", None)
            return skill_commands.plugin_command(arguments.plugin_command, target)
        if arguments.skills_command == "approve":
            return skill_commands.approve_skills()
        return skill_commands.list_skills()
    if arguments.command in ("sessions", "undo"):
        from .terminal.history_commands import list_sessions, undo_in_terminal

        if arguments.command == "sessions":
            return list_sessions()
        return undo_in_terminal(arguments.id, arguments.list, arguments.yes, arguments.overwrite)
    if arguments.command == "tasks":
        from .terminal import background_commands as tasks

        if arguments.tasks_command == "review":
            return tasks.review_in_terminal(arguments.id, arguments.yes)
        if arguments.tasks_command in ("cancel", "discard"):
            act = tasks.cancel if arguments.tasks_command == "cancel" else tasks.discard
            return act(arguments.id)
        return tasks.table()
    if arguments.command == "check-settings":
        return check_settings(arguments.settings)
    if arguments.command == "check-model":
        return check_model(arguments.settings)
    # Logs go to a file or stderr, never stdout: stdout is the protocol's channel.
    from .logs import configure

    configure(arguments.log_file)
    from .lifetime import exit_now, kill_shells_on_signals

    kill_shells_on_signals()
    if arguments.command == "acp":
        with _loading():
            from .acp.agent import serve

        if sys.stdin.isatty():
            print(WAITING_ACP, file=sys.stderr, flush=True)
        serve()
        exit_now(0)
    if arguments.tcp:
        return serve_tcp(arguments.host, arguments.port)
    with _loading():
        from .lsp.server import make_server

        server = make_server()
    if sys.stdin.isatty():
        print(WAITING, file=sys.stderr, flush=True)
    server.start_io()
    # The connection is closed and the tasks cancelled. Python's own teardown of the SDK's
    # modules would keep an editor waiting seconds more for the process to end.
    exit_now(0)


WAITING = (
    "agentls is a language server: it waits for an editor to speak LSP on stdin. "
    'To run one task here: agentls run "<task>". Ctrl-C leaves.'
)


WAITING_ACP = (
    "agentls acp serves the Agent Client Protocol: it waits for an editor (Zed, JetBrains, ...) "
    'to speak it on stdin. To run one task here: agentls run "<task>". Ctrl-C leaves.'
)


@contextlib.contextmanager
def _loading() -> Iterator[None]:
    """Importing a front end makes many objects that live as long as the process does
    (lsprotocol's types, ACP's schema): looking for garbage among them again and again while
    they are made only delays the editor's first answer. Collections are rarer meanwhile
    (a few MiB more held: never collecting at all held 9 MiB), and what was made is frozen,
    never looked at again."""
    thresholds = gc.get_threshold()
    gc.set_threshold(50_000, 50, 50)
    try:
        yield
    finally:
        gc.freeze()
        gc.set_threshold(*thresholds)


def serve_tcp(host: str, port: int) -> int:
    import asyncio

    with _loading():
        from .lsp.tcp import can_check_peers, serve

    if not can_check_peers():
        print(
            "agentls: --tcp needs Linux's /proc/net/tcp to check that a connection is yours; "
            "use stdio (the default) on this system",
            file=sys.stderr,
        )
        return 2
    try:
        asyncio.run(serve(host, port))
    except OSError as error:
        print(f"agentls: cannot serve on {host}:{port}: {error.strerror or error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
