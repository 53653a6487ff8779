"""The first `agentls>` prompt of a conversation, drawn before the rest of agentls is loaded.

The model's SDK and agentls's own modules take a second or more to import (the anthropic SDK
alone 1 to 2 s of CPU); a newcomer would watch an empty terminal meanwhile. So this module
imports prompt_toolkit and nothing heavy: it draws the prompt, and once it is on screen a
thread loads the rest (`load`: the settings, the task's setup, the SDK) while the user types.
What the loading has to say (a settings problem, why bash is not sandboxed) is printed above
the prompt; a failure that stops the run (no API key) ends the prompt with its words.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from prompt_toolkit.application import run_in_terminal

from . import interrupts
from .prompt import Prompt

T = TypeVar("T")


@dataclass
class Loaded(Generic[T]):
    """What the loading made, and the lines it wants the user to read now."""

    value: T
    said: list[str] = field(default_factory=list)


class LoadFailed(Exception):
    """The loading failed in a way that ends the run: its message is for the user."""


@dataclass
class FirstLine(Generic[T]):
    """The first line typed, and what was loaded meanwhile (its `said` not yet printed)."""

    line: str
    loaded: Loaded[T]


class _Loading(Generic[T]):
    """`load` run in a thread, started once; its end reported to the event loop."""

    def __init__(self, load: Callable[[], Loaded[T]], loop: asyncio.AbstractEventLoop) -> None:
        self._load = load
        self._loop = loop
        self.done: asyncio.Future[Loaded[T]] = loop.create_future()
        self._started = False

    def start(self, *_: object) -> None:
        if self._started:
            return
        self._started = True
        threading.Thread(target=self._run, name="agentls-loading", daemon=True).start()

    def _run(self) -> None:
        try:
            loaded = self._load()
        except BaseException as error:  # reported to the loop, which decides
            self._loop.call_soon_threadsafe(_settle, self.done, None, error)
        else:
            self._loop.call_soon_threadsafe(_settle, self.done, loaded, None)


def _settle(
    future: asyncio.Future[Loaded[T]], loaded: Loaded[T] | None, error: BaseException | None
) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        assert loaded is not None
        future.set_result(loaded)


async def first_line(welcome: str, load: Callable[[], Loaded[T]]) -> FirstLine[T] | None:
    """Print `welcome`, read the first line at the `agentls>` prompt while `load` runs in a
    thread (started once the prompt is drawn), and wait for both; None when the user leaves
    (Ctrl-D). Ctrl-C drops the line typed. The loading's exception ends the prompt and is
    raised (LoadFailed: words for the user)."""
    print(welcome, flush=True)
    prompt = Prompt()
    loading = _Loading(load, asyncio.get_running_loop())
    # After the first drawing: the loading's imports hold the GIL, and would slow it.
    prompt.session.app.after_render += loading.start
    reading = asyncio.ensure_future(_read(prompt))
    told = asyncio.ensure_future(_tell(loading.done))
    try:
        either: list[asyncio.Future[Any]] = [reading, loading.done]
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if loading.done.done() and loading.done.exception() is not None:
            reading.cancel()
            await loading.done  # raises
        line = await reading
        if line is None:
            return None
        loading.start()  # in case the prompt was never drawn
        loaded = await loading.done
        if interrupts.came():  # after Enter, while loading (interrupts.py): the run ends
            raise KeyboardInterrupt
        return FirstLine(line, loaded)
    finally:
        prompt.session.app.after_render -= loading.start
        told.cancel()
        if not reading.done():
            reading.cancel()


async def _read(prompt: Prompt) -> str | None:
    while True:
        try:
            line = await prompt.line()
        except KeyboardInterrupt:
            continue
        if line is None or line:
            return line


async def _tell(done: asyncio.Future[Loaded[T]]) -> None:
    """Print what the loading has to say above the prompt, as soon as it is known."""
    try:
        loaded = await asyncio.shield(done)
    except Exception:
        return
    if loaded.said:
        said, loaded.said = loaded.said, []
        await run_in_terminal(lambda: print("\n".join(said), flush=True))
