"""Which program a simple command runs: its words after the wrappers that only run the rest
(`env`, `command`, `exec`, `nice`, `timeout 5`, `sudo`, `xargs`, ...), the program named by
its basename (`/bin/rm` and `/usr/bin/../bin/rm` are `rm`).

A command is not plain when its program runs code a rule cannot read: a shell (`sh -c`,
`bash script`), `eval`, `source`, an interpreter given code (`python -c`, `perl -e`, `awk`),
`find -exec`, or a wrapper with an option this module does not know. What such code runs is
still read where it can be (a shell's `-c` string, `eval`'s words, `find -exec`'s command),
so a deny rule meets it there too."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from .command_line import Word, is_assignment, parse


@dataclass(frozen=True)
class _Wrapper:
    valued: frozenset[str] = frozenset()
    """Options followed by a value (`-u NAME`, `--unset NAME`, also `-uNAME`, `--unset=NAME`)."""
    flags: frozenset[str] = frozenset()
    opaque: frozenset[str] = frozenset()
    """Options with which it runs a string or a shell, not the words that follow."""
    positional: int = 0
    """Words between the options and the program (`timeout`'s duration)."""
    numeric: bool = False
    """`-10` is an option (`nice`)."""


def _w(
    valued: str = "", flags: str = "", opaque: str = "", positional: int = 0, numeric: bool = False
) -> _Wrapper:
    split = (frozenset(valued.split()), frozenset(flags.split()), frozenset(opaque.split()))
    return _Wrapper(*split, positional=positional, numeric=numeric)


_WRAPPERS: dict[str, _Wrapper] = {
    "env": _w(
        "-u --unset -C --chdir",
        "-i --ignore-environment -0 --null -v --debug - --default-signal --ignore-signal "
        "--block-signal --list-signal-handling",
        "-S --split-string",
    ),
    "command": _w(flags="-p"),
    "builtin": _w(),
    "exec": _w("-a", "-c -l"),
    "nice": _w("-n --adjustment", numeric=True),
    "nohup": _w(),
    "time": _w("-f --format -o --output", "-p -a --append -v --verbose -q --quiet --portability"),
    "timeout": _w(
        "-s --signal -k --kill-after", "--preserve-status --foreground -v --verbose", positional=1
    ),
    "stdbuf": _w("-i --input -o --output -e --error"),
    "ionice": _w("-c --class -n --classdata -p --pid -P --pgid -u --uid", "-t --ignore"),
    "setsid": _w(flags="-c --ctty -f --fork -w --wait"),
    "xargs": _w(
        "-a --arg-file -d --delimiter -E -e --eof -I -i --replace -L -l --max-lines -n "
        "--max-args -P --max-procs -s --max-chars --process-slot-var",
        "-0 --null -o --open-tty -p --interactive -r --no-run-if-empty -t --verbose -x --exit",
    ),
    "sudo": _w(
        "-u --user -g --group -h --host -p --prompt -C --close-from -D --chdir -r --role "
        "-t --type -T --command-timeout -U --other-user",
        "-b --background -E -H --set-home -k --reset-timestamp -K -n --non-interactive "
        "-P --preserve-groups -S --stdin -A --askpass -B --bell",
        "-s --shell -i --login -e --edit",
    ),
    "doas": _w("-u -C", "-n", "-s"),
    "busybox": _w(),
    "toybox": _w(),
}
"""Programs that run the words after their options as a command (what they change, a
nice level or a user, does not change which program runs)."""
_DESCRIBES = {"command": {"-v", "-V"}}
"""Options with which a wrapper names the program without running it."""

_SHELLS = frozenset(
    "sh bash dash zsh ksh mksh ash fish csh tcsh yash posh rbash".split()  # noqa: SIM905
)
_RUNS_TEXT = frozenset(
    "eval source . awk gawk mawk nawk watch parallel su script flock expect".split()  # noqa: SIM905
)
"""Programs whose arguments are code (or a command line) for something else to read."""
_INLINE = {
    "python": {"-c"},
    "perl": {"-e", "-E"},
    "ruby": {"-e"},
    "node": {"-e", "--eval", "-p", "--print"},
    "nodejs": {"-e", "--eval", "-p", "--print"},
    "deno": {"eval"},
    "bun": {"-e", "--eval"},
    "php": {"-r"},
    "lua": {"-e"},
    "Rscript": {"-e"},
    "tclsh": set(),
    "osascript": {"-e"},
    "pwsh": {"-c", "-Command"},
}
"""Interpreters and the options that give them code on the command line."""
_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_DEPTH = 8
_LEADING = frozenset({"!", "{", "then", "do", "else", "elif", "if", "while", "until"})
"""Reserved words before a command (`if true; then rm x; fi`): the line is not plain, and
the command after them is what a deny rule looks at."""
"""How deep `sh -c` in `eval` in ... is read; deeper code is only not plain."""


@dataclass
class Program:
    words: list[str]
    """The program's basename and its arguments, the wrappers left out."""
    plain: bool = True
    inner: list[Program] = field(default_factory=list)
    """What the code it runs runs, where it can be read (`sh -c 'rm x'`: `rm x`)."""


def program(words: list[Word], depth: int = 0) -> Program:
    """What a simple command runs (see the module's doc)."""
    rest = list(words)
    while rest and (is_assignment(rest[0].text) or rest[0].text in _LEADING):
        rest.pop(0)
    plain = True
    while rest:
        if rest[0].globbed:
            plain = False  # `/bin/r?` is whatever file the glob finds
        name = posixpath.basename(rest[0].text)
        wrapper = _WRAPPERS.get(name)
        if wrapper is None or _DESCRIBES.get(name, set()) & {w.text for w in rest[1:2]}:
            break
        after = _skip_options(name, wrapper, rest[1:])
        if after is None:
            # `env -S 'rm x'`, `sudo -s rm x`: a string for a shell; read its words anyway.
            texts = [w.text for w in rest[1:]]
            hidden = " ".join(t for t in texts if not t.startswith("-"))
            return Program([name, *texts], False, programs(hidden, depth + 1))
        rest = after
    if not rest:
        return Program([])
    name = posixpath.basename(rest[0].text)
    texts = [name, *(word.text for word in rest[1:])]
    return _reading_code(texts, plain, depth)


def _skip_options(name: str, wrapper: _Wrapper, words: list[Word]) -> list[Word] | None:
    """The words after the wrapper's options (and positionals); None for an option that
    hides the program, or one not known."""
    i = 0
    while i < len(words):
        text = words[i].text
        if text == "--":
            i += 1
            break
        if name in ("env", "sudo") and is_assignment(text):
            i += 1
            continue
        if not text.startswith("-") or (text == "-" and name != "env"):
            break
        option, equals, _ = text.partition("=")
        if option in wrapper.opaque:
            return None
        if option in wrapper.flags or (wrapper.numeric and text[1:].isdigit()):
            i += 1
        elif option in wrapper.valued:
            i += 1 if equals else 2
        elif not text.startswith("--") and (taken := _short_cluster(text, wrapper)) is not None:
            i += taken
        else:
            return None
    rest = words[i:]
    if len(rest) < wrapper.positional:
        return None
    return rest[wrapper.positional :]


def _short_cluster(text: str, wrapper: _Wrapper) -> int | None:
    """`-iu NAME`, `-n10`: how many words the cluster takes, None if a letter is unknown."""
    for at, letter in enumerate(text[1:], 1):
        option = "-" + letter
        if option in wrapper.opaque:
            return None
        if option in wrapper.valued:
            return 1 if at + 1 < len(text) else 2
        if option not in wrapper.flags:
            return None
    return 1


def _reading_code(words: list[str], plain: bool, depth: int) -> Program:
    name, arguments = words[0], words[1:]
    found = Program(words, plain)
    base = name.rstrip("0123456789.")  # python3.12, perl5.36
    if name in _SHELLS:
        found.plain = False
        code = _after_c(arguments)
        if code is not None:
            found.inner = programs(code, depth + 1)
    elif name in _RUNS_TEXT:
        found.plain = False
        if name == "eval":
            found.inner = programs(" ".join(arguments), depth + 1)
    elif base in _INLINE:
        options = _INLINE[base]
        given = (a.split("=")[0] in options or _clusters(a, options) for a in arguments)
        if not options or any(given):
            found.plain = False
    elif name == "find" and _FIND_RUNS & set(arguments):
        found.plain = False
        found.inner = _find_commands(arguments, depth + 1)
    return found


def _clusters(argument: str, options: set[str]) -> bool:
    """`-ne` holds `-e` (perl), `-Sc` holds `-c`."""
    if not argument.startswith("-") or argument.startswith("--"):
        return False
    return any(len(o) == 2 and o[1] in argument[1:] for o in options)


def _after_c(arguments: list[str]) -> str | None:
    """A shell's `-c` code: the first word that is not an option after an option with `c`."""
    for i, word in enumerate(arguments):
        if word.startswith("-") and not word.startswith("--") and "c" in word:
            following = [w for w in arguments[i + 1 :] if not w.startswith("-")]
            return following[0] if following else None
    return None


def _find_commands(arguments: list[str], depth: int) -> list[Program]:
    found = []
    for i, word in enumerate(arguments):
        if word in _FIND_RUNS:
            command = []
            for part in arguments[i + 1 :]:
                if part in (";", "+"):
                    break
                command.append(Word(part))
            if command:
                found.append(program(command, depth))
    return found


def programs(command: str, depth: int = 0) -> list[Program]:
    """Every program a command line runs that can be read, the code of `sh -c` and `eval`
    included; a line that is not plain yields programs that are not plain."""
    if depth > _DEPTH:
        return [Program(command.split(), plain=False)]
    line = parse(command)
    found = [program(words, depth) for words in line.commands]
    if not line.plain:
        for each in found:
            each.plain = False
    return found


def flattened(found: list[Program]) -> list[Program]:
    """Each program and, after it, what its code runs."""
    every: list[Program] = []
    for each in found:
        every.append(each)
        every.extend(flattened(each.inner))
    return every
