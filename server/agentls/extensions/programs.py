"""Where the programs that hooks and MCP servers name run, by whose they are.

The user's own (their settings' hooks and servers, an ACP client's servers) run on the host,
in a private empty folder (`launch.on_host`). The repository's (a project's hooks and
`.mcp.json` servers, once approved) are repository code: they run in the bash sandbox, with
the git audit around each run, since an approval pins the definition, not the files it runs
(`sh .agentls/format.sh` is whatever a sandboxed command last wrote there)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..disk.state import state_dir
from ..shell import launch, sandbox
from ..shell.launch import Launch
from ..shell.sandbox.git_audit import GitAudit

if TYPE_CHECKING:
    from ..shell.settings import ShellSettings


class Programs:
    """How a workspace starts the programs its extensions name: in which sandbox (the
    `sandbox` and `sandboxNetwork` settings), with which variables (`passEnvironment`), and
    the git audit that watches the repository's programs."""

    def __init__(
        self, root: Path, sandbox_setting: str, network: bool, passed: tuple[str, ...] = ()
    ) -> None:
        self.root = root
        self.sandbox_setting = sandbox_setting
        self.network = network
        self.passed = passed
        self.audit = GitAudit(root)

    @classmethod
    def of(cls, root: Path, settings: ShellSettings) -> Programs:
        return cls(root, settings.sandbox, settings.sandbox_network, settings.pass_environment)

    def users(self, argv: Sequence[str], folder: Path, own: Mapping[str, str]) -> Launch:
        """One of the user's programs, in `folder` (`launch.private_folder`)."""
        return launch.on_host(argv, folder, self.root, launch.environment(self.passed), own)

    def projects(self, argv: Sequence[str], own: Mapping[str, str]) -> Launch:
        """One of the repository's programs, confined (RuntimeError where it cannot be).

        In the sandbox the home is read-only, so `uvx server` or `npx -y server` could not
        fill their caches: the project's programs share a writable cache of their own, in
        agentls's state for this project (never the user's, which a repository's program
        could otherwise poison for the user's own runs)."""
        box = sandbox.for_projects(self.sandbox_setting)
        cache = state_dir("cache", self.root) if box is not None else None
        project = dict.fromkeys(launch.PROJECT_VARIABLES, str(self.root))
        caches = sandbox.cache_variables(cache) if cache is not None else {}
        env = {**launch.environment(self.passed), **own, **caches, **project}
        return launch.in_workspace(argv, self.root, env, box, self.network, cache)
