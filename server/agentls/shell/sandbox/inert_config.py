"""Which git config a sandboxed command may leave in a repository: only settings known to run
nothing.

A list of the keys that run a program is never complete (`interactive.diffFilter`,
`gpg.ssh.defaultKeyCommand`, `sendemail.smtpServer`, each new git version adds some), so
the keys allowed are listed instead, and a config that holds any other key is refused. The
file is parsed by git itself (`git config --list`), so what is checked is what git reads.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ...disk import safe_git
from .. import launch

_GIT_SECONDS = 10

_INERT: dict[str, frozenset[str]] = {
    # What `git init`, `git clone` and `git submodule add` write: the repository's format
    # and how files map to the disk (modes, case, links, line endings). Flags and names
    # git reads itself; none names a program or another file (core.worktree is checked).
    "core": frozenset(
        {
            "repositoryformatversion",
            "filemode",
            "bare",
            "logallrefupdates",
            "ignorecase",
            "precomposeunicode",
            "symlinks",
            "autocrlf",
            "eol",
            "safecrlf",
            "worktree",
            "sparsecheckout",
            "sparsecheckoutcone",
            "quotepath",
        }
    ),
    # A repository's object and worktree format (`git init --object-format`, `git
    # sparse-checkout`): formats git implements, not programs.
    "extensions": frozenset({"objectformat", "worktreeconfig"}),
    # Who commits, and the first branch's name: strings recorded in commits.
    "user": frozenset({"name", "email"}),
    "init": frozenset({"defaultbranch"}),
    # How diffs, merges and pulls are shown or combined by git's own code; a driver
    # (`diff.<name>.textconv`, `merge.<name>.driver`) has a subsection and is refused.
    "diff": frozenset({"renames", "algorithm", "colormoved"}),
    "merge": frozenset({"conflictstyle", "ff"}),
    "pull": frozenset({"rebase", "ff"}),
    "push": frozenset({"default", "autosetupremote"}),
    "fetch": frozenset({"prune"}),
    # Housekeeping numbers and durations: how often and how hard git packs and indexes.
    "gc": frozenset(
        {
            "auto",
            "autodetach",
            "autopacklimit",
            "pruneexpire",
            "reflogexpire",
            "reflogexpireunreachable",
        }
    ),
    "pack": frozenset({"threads", "windowmemory", "compression", "depth", "window"}),
    "index": frozenset({"version", "threads", "skiphash"}),
    # Which submodules are checked out: a pathspec, not a command.
    "submodule": frozenset({"active"}),
}
"""Keys without a subsection (`[core]`), by section."""

_INERT_NAMED: dict[str, frozenset[str]] = {
    # Where a branch comes from and goes to: a remote's name (or a URL, checked).
    "branch": frozenset({"remote", "pushremote", "merge", "rebase"}),
    # A remote's address (checked) and which refs it maps. Not `uploadpack`,
    # `receivepack`, `vcs` (programs) nor `proxy`.
    "remote": frozenset({"url", "pushurl", "fetch", "push", "tagopt", "prune", "mirror"}),
    # A submodule's address (checked), place and state. Not `update`, which may be `!cmd`.
    "submodule": frozenset({"url", "active", "path", "branch"}),
    # A prefix rewritten to another address (checked).
    "url": frozenset({"insteadof", "pushinsteadof"}),
}
"""Keys of named subsections (`[remote "origin"]`), by section."""

_COLORS = "color"
"""Every `color.*` key is inert: its value is a color or a boolean."""

_URLS = {
    ("remote", "url"),
    ("remote", "pushurl"),
    ("submodule", "url"),
    ("branch", "remote"),
    ("branch", "pushremote"),
    ("url", "insteadof"),
    ("url", "pushinsteadof"),
}
"""Values that are (or may be) addresses git connects to."""

_HELPER = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*::")
"""`<transport>::<address>`: git runs `git-remote-<transport>`; `ext::` runs a shell command
and `fd::` talks to a descriptor."""
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_GITS_OWN = {"http", "https", "ftp", "ftps", "ssh", "git", "git+ssh", "ssh+git", "file"}
"""Schemes git speaks itself (or with the helpers it installs). Any other `<scheme>://`
runs `git-remote-<scheme>` from PATH, which may hold a folder of the workspace (a venv's
`bin`, `node_modules/.bin`)."""


def refusal(config: bytes, git_folder: Path, root: Path) -> str | None:
    """Why git would run something of this config or read another file for it (the first
    key that is not inert, or a value that runs a program), or None when it runs nothing."""
    entries = _parsed(config, root)
    if entries is None:
        return "a config git cannot read"  # and so cannot be checked
    for key, value in entries:
        reason = _refused(key, value, git_folder, root)
        if reason is not None:
            return reason
    return None


def _parsed(config: bytes, root: Path) -> list[tuple[str, str]] | None:
    """The config's (key, value) pairs as git reads them; includes are not followed (an
    `include.path` key is refused like any other not listed)."""
    arguments = ["config", "--file", "-", "--list", "-z", "--no-includes"]
    try:
        # Not in any repository: a cwd of its own, so git discovers none to read.
        with launch.private_folder() as folder:
            output = safe_git.run(
                arguments, folder, data=config, timeout=_GIT_SECONDS, workspace=root
            )
    except safe_git.GitError:
        return None
    pairs = []
    for entry in output.decode("utf-8", "surrogateescape").split("\0"):
        if entry:
            key, _, value = entry.partition("\n")
            pairs.append((key, value))
    return pairs


def _refused(key: str, value: str, git_folder: Path, root: Path) -> str | None:
    section, _, rest = key.partition(".")
    named, _, name = rest.rpartition(".")
    section, name = section.lower(), name.lower()
    if section == _COLORS:
        return None
    allowed = _INERT_NAMED.get(section, frozenset()) if named else _INERT.get(section)
    if allowed is None or name not in allowed:
        return key
    if (section, name) in _URLS:
        problem = url_problem(value) or (url_problem(named) if section == "url" else None)
        return f"{key} {problem}" if problem else None
    if (section, name) == ("core", "worktree") and not _inside(git_folder / value, root):
        return f"{key} outside the workspace"
    return None


def url_problem(url: str) -> str | None:
    """What git would run to reach `url`, beyond its own transports, or None."""
    helper = _HELPER.match(url)
    if helper:
        return f"runs a remote helper ({helper.group()})"
    scheme = _SCHEME.match(url)
    if scheme and scheme.group(1).lower() not in _GITS_OWN:
        return f"runs a remote helper ({scheme.group()})"
    if url.lstrip().startswith("-"):
        return "is an option, not an address"
    return None


def _inside(path: Path, root: Path) -> bool:
    real = Path(os.path.realpath(path))
    return real.is_relative_to(root)
