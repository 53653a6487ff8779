"""The terminal door's commands: `agentls run` (its start is `start.py`), `sessions`, `undo`,
`tasks`, `mcp`, `hooks`, `skills`, `plugin`, `check-settings` and `check-model`. Each
command's parser names the function that runs it (`door`); that function imports what the
command needs when it runs, so that parsing stays light for every door."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..permissions.modes import MODES
from ..settings.arguments import max_steps, provider
from . import start


def _task(text: str) -> str:
    """The task: not blank, which the API would refuse as an empty message."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "say what the agent should do, or leave the task out for a conversation"
        )
    return text


def add_run(commands: Any) -> argparse.ArgumentParser:
    """`agentls run`, among the `agentls` commands."""
    run: argparse.ArgumentParser = commands.add_parser(
        "run", help="run a task in the current directory; with none, a conversation"
    )
    run.set_defaults(door=start.main)
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
    _add_run_settings(run)
    resume = run.add_mutually_exclusive_group()
    resume.add_argument(
        "--continue",
        dest="continue_last",
        action="store_true",
        help="go on with this folder's last session",
    )
    resume.add_argument("--resume", metavar="ID", help="go on with a saved session")
    return run


def _add_run_settings(run: argparse.ArgumentParser) -> None:
    """The flags of `agentls run` that set a setting for the run, and `--background`."""
    run.add_argument(
        "--provider",
        type=provider,
        help="where the model runs: anthropic, openai or a profile (default: AGENTLS_PROVIDER)",
    )
    run.add_argument("--model", help="model id (default: AGENTLS_MODEL or a current Sonnet)")
    run.add_argument("--max-steps", type=max_steps, help="stop after this many model turns")
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


def add_commands(commands: Any) -> None:
    """The terminal's other commands: sessions, background tasks, extensions, undo, checks."""
    commands.add_parser(
        "sessions", help="list this folder's saved sessions, newest first"
    ).set_defaults(door=_sessions)
    tasks = commands.add_parser("tasks", help="this folder's background tasks: list, review")
    tasks.set_defaults(door=_tasks)
    task_commands = tasks.add_subparsers(dest="tasks_command")
    for name, words in (
        ("review", "put the task's change to you, hunk by hunk"),
        ("cancel", "stop a task that runs or waits"),
        ("discard", "remove the task, its worktree and its branch"),
        ("log", "what the task's agent said and did, as a transcript"),
    ):
        one = task_commands.add_parser(name, help=words)
        one.add_argument("id", help="the task's id (agentls tasks lists them)")
        if name == "review":
            one.add_argument("--yes", action="store_true", help="accept every hunk")
    _add_extension_commands(commands)
    _add_undo(commands)
    check = commands.add_parser(
        "check-settings", help="check an agentls settings object (JSON) as the server would"
    )
    check.set_defaults(door=_check_settings)
    check.add_argument("settings", help='the object under "agentls", e.g. \'{"maxSteps": 20}\'')
    model = commands.add_parser(
        "check-model",
        help="say which model, endpoint and key variable these settings (JSON) would use",
    )
    model.set_defaults(door=_check_model)
    model.add_argument(
        "settings", help='the object under "agentls", e.g. \'{"provider": "ollama"}\''
    )


def _add_extension_commands(commands: Any) -> None:
    """`agentls mcp`, `lsp`, `hooks`, `skills` and `plugin`."""
    mcp = commands.add_parser(
        "mcp", help="the MCP servers: list them, sign in, approve a project's"
    )
    mcp.set_defaults(door=_mcp)
    mcp_commands = mcp.add_subparsers(dest="mcp_command", required=True)
    mcp_commands.add_parser("list", help="each server, its state and tools, or why it failed")
    mcp_commands.add_parser("resources", help="the resources each server offers")
    login = mcp_commands.add_parser("login", help="sign in to an HTTP server (its browser page)")
    login.add_argument("name", help="the server's name")
    logout = mcp_commands.add_parser("logout", help="forget the tokens of an HTTP server")
    logout.add_argument("name", help="the server's name")
    approve = mcp_commands.add_parser("approve", help="let this project's .mcp.json server run")
    approve.add_argument("name", help="the server's name in .mcp.json")
    lsp = commands.add_parser(
        "lsp", help="the language servers outside the editor: list them, approve a project's"
    )
    lsp.set_defaults(door=_lsp)
    lsp_commands = lsp.add_subparsers(dest="lsp_command", required=True)
    lsp_commands.add_parser("list", help="each server, from where, approved or waiting")
    approve = lsp_commands.add_parser("approve", help="let this project's .lsp.json server run")
    approve.add_argument("name", help="the server's name in .lsp.json")
    hooks = commands.add_parser("hooks", help="the hooks of this project's .agentls/settings.json")
    hooks.set_defaults(door=_hooks)
    hooks_commands = hooks.add_subparsers(dest="hooks_command", required=True)
    hooks_commands.add_parser("approve", help="let the project's hooks run, as defined now")
    skills = commands.add_parser(
        "skills", help="the skills and commands found here, from where, what was skipped"
    )
    skills.set_defaults(door=_skills)
    skills_commands = skills.add_subparsers(dest="skills_command")
    skills_commands.add_parser(
        "approve", help="let the project's skills and commands in, as they are now"
    )
    plugin = commands.add_parser("plugin", help="your plugins: add, list, remove")
    plugin.set_defaults(door=_plugin)
    plugin_commands = plugin.add_subparsers(dest="plugin_command", required=True)
    plugin_commands.add_parser("add", help="add a plugin folder").add_argument("path")
    plugin_commands.add_parser("list", help="the plugins you added")
    plugin_commands.add_parser("remove", help="forget a plugin").add_argument("name")


def _add_undo(commands: Any) -> None:
    undo = commands.add_parser(
        "undo", help="undo the agent's changes back to a checkpoint (default: the last task)"
    )
    undo.set_defaults(door=_undo)
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


def _sessions(arguments: argparse.Namespace) -> int:
    from .history_commands import list_sessions

    return list_sessions()


def _undo(arguments: argparse.Namespace) -> int:
    from .history_commands import undo_in_terminal

    return undo_in_terminal(arguments.id, arguments.list, arguments.yes, arguments.overwrite)


def _tasks(arguments: argparse.Namespace) -> int:
    from . import background_commands as tasks

    if arguments.tasks_command == "review":
        return tasks.review_in_terminal(arguments.id, arguments.yes)
    if arguments.tasks_command in ("cancel", "discard", "log"):
        acts = {"cancel": tasks.cancel, "discard": tasks.discard, "log": tasks.log}
        return acts[arguments.tasks_command](arguments.id)
    return tasks.table()


def _mcp(arguments: argparse.Namespace) -> int:
    from . import mcp_commands

    if arguments.mcp_command == "list":
        return mcp_commands.list_servers()
    if arguments.mcp_command == "resources":
        return mcp_commands.list_resources()
    if arguments.mcp_command == "login":
        return mcp_commands.login(arguments.name)
    if arguments.mcp_command == "logout":
        return mcp_commands.logout(arguments.name)
    return mcp_commands.approve("mcp", arguments.name)


def _lsp(arguments: argparse.Namespace) -> int:
    from . import lsp_commands, mcp_commands

    if arguments.lsp_command == "list":
        return lsp_commands.list_servers()
    return mcp_commands.approve("lsp", arguments.name)  # as a project's MCP server is


def _hooks(arguments: argparse.Namespace) -> int:
    from . import mcp_commands

    return mcp_commands.approve("hooks", "project")


def _skills(arguments: argparse.Namespace) -> int:
    from . import skill_commands

    if arguments.skills_command == "approve":
        return skill_commands.approve_skills()
    return skill_commands.list_skills()


def _plugin(arguments: argparse.Namespace) -> int:
    from . import skill_commands

    target = getattr(arguments, "path", None) or getattr(arguments, "name", None)
    return skill_commands.plugin_command(arguments.plugin_command, target)


def _check_settings(arguments: argparse.Namespace) -> int:
    from .settings_commands import check_settings

    return check_settings(arguments.settings)


def _check_model(arguments: argparse.Namespace) -> int:
    from .settings_commands import check_model

    return check_model(arguments.settings)
