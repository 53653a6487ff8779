"""`.worktreeinclude`: the ignored files a fresh worktree needs and git does not carry (`.env`,
`node_modules`, build outputs), named in the repository's top folder with gitignore patterns,
as Claude Code reads the file. A file is copied when it matches a pattern and the
repository ignores it (what git tracks or would add is in the tree already).

git itself matches the patterns (`ls-files --exclude-from`), so they mean exactly what they
mean in a `.gitignore`. A folder named `node_modules` is linked, not copied: it is large,
and only read by the task's tools (a write through a link leaves the root, which the tools
and the sandbox refuse). It is made a real folder whose entries are links, so that a
`node_modules/` rule (folders only) still ignores it and it never enters the task's change.
Symbolic links are copied as links, never followed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..tasktree.worktree import git

INCLUDE = ".worktreeinclude"
LINKED = frozenset({"node_modules"})


def wanted(root: Path) -> list[str]:
    """The ignored paths of `root` that `.worktreeinclude` names (a folder ends with `/`)."""
    patterns = root / INCLUDE
    if not patterns.is_file() or patterns.is_symlink():
        return []
    named = git(
        [
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--directory",
            f"--exclude-from={patterns}",
        ],
        root,
    ).split("\0")
    named = [path for path in named if path]
    if not named:
        return []
    # Only what the repository ignores: check-ignore answers with those of its input.
    ignored = git(
        ["check-ignore", "-z", "--no-index", "--stdin"],
        root,
        data="\0".join(p.rstrip("/") for p in named).encode("utf-8", "surrogateescape"),
        check=False,
    ).split("\0")
    kept = set(filter(None, ignored))
    return sorted(p for p in named if p.rstrip("/") in kept)


def copy(root: Path, tree: Path) -> list[str]:
    """Copy (or link) what `.worktreeinclude` names from `root` into `tree`; the paths done."""
    done = []
    for name in wanted(root):
        relative = Path(name.rstrip("/"))
        if relative.is_absolute() or ".." in relative.parts:
            continue
        source, target = root / relative, tree / relative
        if target.exists() or target.is_symlink():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            os.symlink(os.readlink(source), target)
        elif source.is_dir() and relative.name in LINKED:
            target.mkdir()
            for inner in source.iterdir():
                os.symlink(inner, target / inner.name)
        elif source.is_dir():
            shutil.copytree(source, target, symlinks=True)
        elif source.is_file():
            shutil.copy2(source, target)
        else:
            continue  # a socket, a FIFO: nothing a task reads
        done.append(relative.as_posix())
    return done
