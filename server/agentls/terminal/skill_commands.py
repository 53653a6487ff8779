"""`agentls skills` (what was found, from where, what was skipped and why), `agentls skills
approve` (the project's, as they are now: for `-p` users, who are never asked), and
`agentls plugin add PATH | list | remove NAME`."""

from __future__ import annotations

from pathlib import Path

from ..config import user_settings
from ..extensions import plugins
from ..extensions.commands import approve_waiting, available, described
from ..extensions.trust import Trust
from ..settings.user import load as load_user_settings


def list_skills() -> int:
    root = Path.cwd()
    settings, problems = load_user_settings()
    installed, broken = plugins.installed(settings.plugins)
    for problem in [*problems, *broken]:
        print(f"agentls: {problem}")
    shared = available(root, installed, Trust(root))
    found = shared.found
    for skill in sorted(found.skills.values(), key=lambda s: s.name):
        state = "" if skill.name in shared.skills and shared.skills[skill.name] is skill else (
            " [waiting for approval: agentls skills approve]"
        )  # fmt: skip
        hidden = "" if skill.model_invocable else " [/ only: disable-model-invocation]"
        print(f"{skill.name} ({skill.origin}){state}{hidden}: {skill.description}")
    for skill in found.shadowed:
        print(f"{skill.name} ({skill.origin}): overridden by the one above")
    commands = [c for c in shared.listing() if c.skill is None]
    for command in commands:
        print(f"/{command.name} ({command.origin}): {command.description}")
    for key in sorted(k for k in shared.waiting if k.startswith("command:")):
        print(f"/{key.removeprefix('command:')} (project) [waiting for approval]")
    for skipped in found.skipped:
        print(f"skipped {skipped.path}: {skipped.why}")
    if not found.skills and not commands and not found.skipped and not shared.waiting:
        print(
            "No skills: put folders with a SKILL.md in .agents/skills/ (this project) or "
            "~/.agents/skills/ (yours)"
        )
    return 0


def approve_skills() -> int:
    root = Path.cwd()
    waiting = available(root, (), Trust(root)).waiting
    if not waiting:
        print("agentls: the project has no skills or commands waiting for approval")
        return 1
    approve_waiting(Trust(root), waiting)
    print(f"Approved for {root}: {described(waiting)}")
    return 0


def plugin_command(action: str, argument: str | None) -> int:
    if action == "list":
        settings, _ = load_user_settings()
        installed, broken = plugins.installed(settings.plugins)
        for plugin in installed:
            version = f" {plugin.version}" if plugin.version else ""
            print(f"{plugin.name}{version} ({plugin.layout}): {plugin.folder}")
            if plugin.description:
                print(f"  {plugin.description}")
        for problem in broken:
            print(f"agentls: {problem}")
        if not installed and not broken:
            print("No plugins: agentls plugin add PATH")
        return 0
    if action == "add":
        try:
            plugin = plugins.add(Path(argument or "."))
        except (ValueError, OSError) as error:
            print(f"agentls: {error}")
            return 1
        print(
            f"Added the plugin {plugin.name} ({plugin.folder}) to {user_settings.settings_path()}"
        )
        return 0
    try:
        removed = plugins.remove(argument or "")
    except OSError as error:
        print(f"agentls: {error}")
        return 1
    if removed is None:
        print(f"agentls: no plugin {argument} (see agentls plugin list)")
        return 1
    print(f"Removed the plugin {argument} ({removed})")
    return 0
