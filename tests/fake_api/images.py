"""Images in requests, as both APIs take them: checked as the real APIs check them (a 400
for an image they would refuse), and listed for tests (`Recorded.images`)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator, Mapping
from typing import Any

MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
MAX_IMAGE_BYTES = 5 * 1024 * 1024
"""The Messages API's limit for one image's base64 data."""


def _nested(blocks: Any) -> Iterator[dict[str, Any]]:
    for block in blocks if isinstance(blocks, list) else []:
        if isinstance(block, dict):
            yield block
            yield from _nested(block.get("content"))


def messages_images(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every image block of a Messages request (in user turns and inside tool_results), in
    order, as `{"media_type", "data", "where"}` (`where`: "user" or "tool_result")."""
    found = []
    for message in body.get("messages") or []:
        for block in message.get("content") if isinstance(message.get("content"), list) else []:
            if block.get("type") == "image":
                found.append({**block.get("source", {}), "where": "user"})
            for inner in (
                _nested(block.get("content")) if block.get("type") == "tool_result" else ()
            ):
                if inner.get("type") == "image":
                    found.append({**inner.get("source", {}), "where": "tool_result"})
    return found


def chat_images(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every image_url part of a Chat Completions request, as `{"media_type", "data",
    "where"}` (`where`: the role of its message)."""
    found = []
    for message in body.get("messages") or []:
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and part.get("type") == "image_url":
                url = str((part.get("image_url") or {}).get("url", ""))
                head, _, data = url.partition(",")
                media_type = head.removeprefix("data:").removesuffix(";base64")
                found.append({"media_type": media_type, "data": data, "where": message["role"]})
    return found


def image_problem(media_type: str, data: str, where: str) -> str | None:
    """The 400 the API gives for this image, or None."""
    if media_type not in MEDIA_TYPES:
        return f"{where}: image media_type must be one of {', '.join(MEDIA_TYPES)}"
    if len(data) > MAX_IMAGE_BYTES:
        return f"{where}: image exceeds 5 MB maximum: {len(data)} bytes > {MAX_IMAGE_BYTES} bytes"
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return f"{where}: the image was specified using the image content type, but the image data is not valid base64"  # noqa: E501
    return None


def messages_image_problem(body: Mapping[str, Any]) -> str | None:
    for image in messages_images(body):
        said = image_problem(image.get("media_type", ""), image.get("data", ""), "messages")
        if said:
            return said
    return None


def chat_image_problem(body: Mapping[str, Any]) -> str | None:
    """OpenAI takes images in user messages only; a tool message's content is text."""
    for message in body.get("messages") or []:
        content = message.get("content")
        if (
            message.get("role") != "user"
            and isinstance(content, list)
            and any(isinstance(p, dict) and p.get("type") == "image_url" for p in content)
        ):
            role = message.get("role")
            return f"Invalid 'messages': image_url is only supported in user messages, not {role}"
    for image in chat_images(body):
        said = image_problem(image["media_type"], image["data"], "messages")
        if said:
            return said
    return None
