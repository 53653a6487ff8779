"""Running git without letting a repository choose what gets executed.

A repository's own `.git/config` (written by a hostile clone, a tarball, or a model) can name
programs for git to run: `core.fsmonitor` runs on any command that reads the index (`git
ls-files` included), and hooks, pagers, editors, credential helpers, ssh and proxy commands,
external diffs and transports do the same for other commands. Every git process agentls
starts goes through `safe_git_command`, which overrides each of those from the command line
(which beats the repository's config) and reads no system or global config at all.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from ..shell import launch

_OVERRIDES = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.editor=false",
    "core.sequenceEditor=false",
    "core.askPass=",
    "core.sshCommand=false",
    "core.gitProxy=",
    "core.alternateRefsCommand=",
    "core.untrackedCache=false",
    "credential.helper=",
    "diff.external=",
    "gpg.program=false",
    "protocol.allow=never",
    "submodule.recurse=false",
    # A folder holding HEAD, config, objects/ and refs/ (four write_file calls) would be a
    # bare repository found by discovery; only an explicit --git-dir may use one.
    "safe.bareRepository=explicit",
)
"""`-c` settings that disable every repository-configured program the commands agentls runs
could start. Filter and textconv drivers (`filter.<name>.clean`, `diff.<name>.textconv`)
cannot be listed ahead (any name will do), so a command that runs them (`add`, `diff`,
`checkout`, `status` on a dirty tree) must use a git dir whose config agentls writes itself,
such as a shadow repository with `--git-dir` and `--work-tree`; `ls-files` runs none."""

_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
}


def safe_git_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allow-listed part of `env` (default: the server's; `launch.environment`: no
    secret, no GIT_* variable, no SSH_ASKPASS), plus the variables that keep git from
    reading system or global config, prompting or paging."""
    return {**launch.environment(source=env), **_ENV}


def safe_git_command(arguments: Sequence[str]) -> list[str]:
    """The argv for `git <arguments>` with every program-running setting overridden.

    Run it with `env=safe_git_env()` and stdin closed. `arguments` must start with a git
    builtin (an alias is a program the repository chooses).
    """
    overrides = [item for setting in _OVERRIDES for item in ("-c", setting)]
    return ["git", "--no-pager", *overrides, *arguments]
