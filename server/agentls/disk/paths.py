"""Keeping every path the model names inside the workspace root."""

from __future__ import annotations

from pathlib import Path


class PathError(ValueError):
    """A path the tools refuse; the message is meant for the model."""


def resolve(root: Path, path: str) -> Path:
    """The real path of `path` (relative to `root`), refused if it leaves `root`.

    Symlinks are resolved before the check, so a link pointing out of the root is refused too.
    An absolute path is accepted only when it lies inside the root.
    """
    if not isinstance(path, str) or not path.strip():
        raise PathError("path must be a non-empty string relative to the workspace root")
    if "\0" in path:
        raise PathError("path contains a NUL character")
    real_root = root.resolve()
    real = _resolved(real_root / path)
    if real is None:
        raise PathError(f"{path[:200]!r} cannot be used: a symlink on the way points to itself")
    if not real.is_relative_to(real_root):
        raise PathError(f"{path!r} is outside the workspace root; use a path relative to {root}")
    try:
        real.lstat()
    except (FileNotFoundError, NotADirectoryError):
        pass  # the tools say what is missing
    except OSError as error:  # a name too long, a folder not searchable: no tool could use it
        raise PathError(f"{path[:200]!r} cannot be used: {error.strerror}") from None
    # Spelled under the root as the editor gave it (which may itself be a symlink), so the
    # path matches the editor's document URIs.
    return root / real.relative_to(real_root)


def refuse_git_metadata(root: Path, target: Path) -> None:
    """Refuse a path in a `.git` folder, or naming one, anywhere in the tree.

    git runs programs its config names (fsmonitor, hooks), so a model that could write
    `.git/config`, or create a `.git` that makes a folder a repository, could run commands
    without approval. `target` is resolved, so a symlink to `.git` is refused too.
    """
    name = relative(root, target)
    if any(part.casefold() == ".git" for part in name.split("/")):
        raise PathError(
            f"{name} is git's metadata (.git), which the tools never change; run git commands "
            "with bash instead"
        )


def inside(real_root: Path, path: Path) -> bool:
    """Whether `path`, symlinks resolved, lies inside `real_root` (resolved by the caller,
    once for many paths)."""
    real = _resolved(path)
    return real is not None and real.is_relative_to(real_root)


def _resolved(path: Path) -> Path | None:
    """`path` with its symlinks resolved, or None for a symlink loop (which Python 3.10 to
    3.12 report as a RuntimeError, later ones not at all: then the loop is left unresolved
    and the first use of the path fails with ELOOP)."""
    try:
        return path.resolve()
    except RuntimeError:
        return None


def relative(root: Path, path: Path) -> str:
    """`path` as the model should name it: relative to the root, with forward slashes."""
    if not path.is_relative_to(root):
        root = root.resolve()  # only then: it is called for every file grep reads
        if not path.is_relative_to(root):
            return path.as_posix()
    return path.relative_to(root).as_posix() or "."
