"""Images in tool results: read_file of a PNG, JPEG, GIF or WebP, and web_fetch of an image.

A tool's handler answers with text (`tools.base.Handler`), which every door, hook and cut
handles as text. An image travels beside it: the loop opens a collection for each call
(`collecting`), the handler `attach`es the image there, and the loop puts it into that
call's tool_result after the text. Each call runs in its own task, so calls run together
never see each other's images. Outside the loop (a test, a hook) nobody collects, and the
model gets the text placeholder instead.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from .. import images
from ..disk.files import read_bytes
from ..disk.paths import relative, resolve
from ..interfaces import Block
from .base import ToolContext, ToolError

_ATTACHED: ContextVar[list[Block] | None] = ContextVar("attached_images", default=None)

_NOBODY_COLLECTS = "[image {name} not shown: images reach the model only in an agent task]"


@contextlib.contextmanager
def collecting() -> Iterator[list[Block]]:
    """The images the tool call run inside this block attaches, in order."""
    attached: list[Block] = []
    token = _ATTACHED.set(attached)
    try:
        yield attached
    finally:
        _ATTACHED.reset(token)


def attach(image: images.Image, vision: bool) -> str:
    """Hand `image` to the model with the call's result; the text for the result: the
    image's size line, or why it is not shown (a placeholder, never an error)."""
    blocks = image.blocks(vision)
    text = blocks[0]["text"]
    collection = _ATTACHED.get()
    if len(blocks) == 1:
        return str(text)
    if collection is None:
        return _NOBODY_COLLECTS.format(name=image.name)
    collection.extend(blocks[1:])
    return f"{text} attached below."


def with_images(result: Block, attached: list[Block]) -> Block:
    """A tool_result with the call's images after its text."""
    if not attached:
        return result
    text = result.get("content", "")
    return {**result, "content": [{"type": "text", "text": text}, *attached]}


async def read_image(context: ToolContext, arguments: dict[str, Any]) -> str:
    """read_file of an image file: the image itself for a vision model."""
    root = context.workspace.root
    target = resolve(root, arguments["path"])
    name = relative(root, target)
    try:
        data = await asyncio.to_thread(read_bytes, root, target, images.MAX_INPUT_BYTES)
    except FileNotFoundError:
        raise ToolError(f"{name} does not exist; use list_files or grep to find it") from None
    image = await asyncio.to_thread(images.prepare, name, data)
    return attach(image, context.settings.vision is not False)
