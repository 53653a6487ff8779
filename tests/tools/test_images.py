"""Images for the model: read_file of an image, scaling, placeholders, the context budget."""

from __future__ import annotations

import base64
import io
from pathlib import Path

from agentls import images
from agentls.agent.context import IMAGE_DROPPED, ContextBudget, block_chars
from agentls.tools import run_tool
from agentls.tools.image_results import collecting
from doubles import ScriptedModel, call, make_agent, results, say, tool_context
from pictures import noisy_png, png, write_png
from PIL import Image


def size_of(block: dict) -> tuple[int, int]:
    data = base64.b64decode(block["source"]["data"])
    with Image.open(io.BytesIO(data)) as picture:
        return picture.size


async def test_read_file_of_a_png_attaches_the_image_with_a_size_line(tmp_path: Path) -> None:
    write_png(tmp_path / "shot.png", 40, 30)
    with collecting() as attached:
        text, is_error = await run_tool(tool_context(tmp_path), "read_file", {"path": "shot.png"})
    assert not is_error
    assert text.startswith("[image shot.png: PNG, 40x30 px") and "attached below" in text
    (image,) = attached
    assert image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]) == (tmp_path / "shot.png").read_bytes()


async def test_a_6000_px_image_is_scaled_to_the_long_edge(tmp_path: Path) -> None:
    (tmp_path / "big.png").write_bytes(png(6000, 1500))
    with collecting() as attached:
        text, _ = await run_tool(tool_context(tmp_path), "read_file", {"path": "big.png"})
    assert "6000x1500 px, scaled to 1568x392" in text
    assert size_of(attached[0]) == (1568, 392)


def test_an_image_too_heavy_after_scaling_is_scaled_further_under_5_mb() -> None:
    image = images.prepare("noise.png", noisy_png(1500, 1500))
    assert image.shown and len(image.data) <= images.MAX_BYTES
    assert image.media_type == "image/jpeg"  # a photo-like picture: JPEG fits, PNG would not


async def test_a_corrupt_image_gives_a_placeholder_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "broken.png").write_bytes(png()[:60])
    with collecting() as attached:
        text, is_error = await run_tool(tool_context(tmp_path), "read_file", {"path": "broken.png"})
    assert not is_error and attached == []
    assert text.startswith("[image broken.png not shown:")


async def test_a_model_without_vision_gets_a_placeholder(tmp_path: Path) -> None:
    write_png(tmp_path / "shot.png")
    with collecting() as attached:
        context = tool_context(tmp_path, vision=False)
        text, is_error = await run_tool(context, "read_file", {"path": "shot.png"})
    assert not is_error and attached == []
    assert "does not take images" in text


async def test_the_image_reaches_the_model_inside_the_tool_result(tmp_path: Path) -> None:
    write_png(tmp_path / "shot.png")
    model = ScriptedModel(call("read_file", path="shot.png"), say("A red square."))
    agent, _ = make_agent(tmp_path, model)
    result = await agent.run("what is in shot.png?")
    assert result.status == "done"
    (answer,) = results(model.requests[-1])
    text, image = answer["content"]
    assert text["type"] == "text" and "PNG, 40x30 px" in text["text"]
    assert image["type"] == "image"


async def test_the_users_images_go_before_their_words(tmp_path: Path) -> None:
    model = ScriptedModel(say("A red square."))
    agent, _ = make_agent(tmp_path, model)
    shot = images.prepare("shot.png", png())
    await agent.run("what is this?", images=[shot])
    size, image, words = model.requests[0][0]["content"]
    assert size["text"].startswith("[image shot.png: PNG")
    assert image["type"] == "image" and words["text"] == "what is this?"


def test_images_weigh_in_the_budget_and_are_dropped_first() -> None:
    image = images.prepare("shot.png", png()).block()
    old_result = {"type": "tool_result", "tool_use_id": "a", "content": "x" * 3000}
    messages = [
        {"role": "user", "content": [image, {"type": "text", "text": "look"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "a", "name": "bash", "input": {}}],
        },
        {"role": "user", "content": [old_result]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        {"role": "user", "content": [{"type": "text", "text": "next"}]},
    ]
    assert block_chars(image) == images.IMAGE_CHARS
    chars = sum(block_chars(b) for m in messages for b in m["content"])
    budget = ContextBudget(tokens_per_char=1.0)
    # Just over the limit: dropping the image alone brings it under the target.
    after = chars - images.IMAGE_CHARS + len(IMAGE_DROPPED)
    removed = budget.fit(messages, chars, int(after / 0.6) + 1)
    assert removed == images.IMAGE_CHARS - len(IMAGE_DROPPED)
    assert messages[0]["content"][0] == {"type": "text", "text": IMAGE_DROPPED}
    assert messages[2]["content"][0] == old_result  # text results stay until images are gone
