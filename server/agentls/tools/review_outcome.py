"""What the model is told of a reviewed edit: which hunks landed, what was rejected, or why
nothing was applied. The words are the server's alone (docs/protocol.md)."""

from __future__ import annotations

from ..edits import landed, unified_diff
from ..interfaces import Change, Landed
from ..shell.bounded_output import cut_middle
from .line_endings import converted


def not_applied(change: Change, outcome: Landed, name: str) -> str:
    """Why nothing of the change landed."""
    # The editor's reason may be the user's no, or a document that changed meanwhile.
    reason = outcome.rejected_reason or "the user rejected it"
    state = "was not created" if change.old_text is None else "is unchanged"
    return f"The edit of {name} was not applied: {reason}. The file {state}."


def describe(change: Change, outcome: Landed, name: str, secrets: tuple[str, ...]) -> str:
    """What landed of a change of which something landed, and whether the disk has it."""
    report = _landed(change, outcome, name, secrets)
    if not outcome.on_disk and outcome.text is not None:
        report += (
            f"\nThe change is in the editor's unsaved buffer of {name}: shell commands see the "
            "old file until the user saves it."
        )
    return report


def _landed(change: Change, outcome: Landed, name: str, secrets: tuple[str, ...]) -> str:
    """What landed of a change of which something landed."""
    total = len(change.hunks)
    plural = "hunk" if total == 1 else "hunks"
    verb = "Created" if change.old_text is None else "Edited"
    if outcome.text is None:
        return (
            f"The editor applied the edit of {name} but has not saved it, so which hunks the "
            "user kept cannot be seen; shell commands and read_file see the file on disk "
            "without the change until the user saves it."
        )
    if outcome.text == change.new_text:
        return f"{verb} {name}: {'all ' if total > 1 else ''}{total} {plural} accepted."
    if converted(outcome.text, "lf") == converted(change.new_text, "lf"):
        # Line-holding editors (Neovim 0.7, Vim) end every line as the buffer's fileformat.
        return (
            f"{verb} {name}: {'all ' if total > 1 else ''}{total} {plural} accepted, but the "
            f"editor ended its lines with {_endings(outcome.text)}, not with "
            f"{_endings(change.new_text)} as proposed."
        )
    choices = landed(change.old_text or "", change.hunks, outcome.text)
    if choices is None:
        diff = unified_diff(change.old_text or "", outcome.text, name)
        return (
            f"{name} changed, but not as proposed (it was edited during the review). "
            f"Its changes against the text you read:\n{cut_middle(diff, 4000, secrets)}"
        )
    rejected = [hunk for hunk, kept in zip(change.hunks, choices, strict=True) if not kept]
    lines = [f"{verb} {name}: {total - len(rejected)} of {total} {plural} accepted. Rejected:"]
    for hunk in rejected:
        proposed = cut_middle(hunk.text, 300, secrets).rstrip("\n") or "(nothing)"
        lines.append(f"- {hunk.describe()}, which proposed:\n{proposed}")
    return "\n".join(lines)


def _endings(text: str) -> str:
    crlf = text.count("\r\n")
    return "LF" if not crlf else "CRLF" if crlf == text.count("\n") else "LF and CRLF mixed"
