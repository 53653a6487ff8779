"""Images for the model: read_file of an image, scaling, placeholders, the context budget."""

from __future__ import annotations

import asyncio
import base64
import io
import time
from pathlib import Path
from typing import Any

import pytest
from agentls import images
from agentls.agent.context import IMAGE_DROPPED, ContextBudget, block_chars
from agentls.tools import run_tool
from agentls.tools.image_results import collecting
from doubles import ScriptedModel, call, make_agent, results, say, tool_context
from pictures import huge_png, noisy_png, png, write_png
from PIL import Image, ImageFile


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


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """The size of every picture Pillow decodes (ImageFile.load), as it is decoded."""
    decoded: list[tuple[int, int]] = []
    real = ImageFile.ImageFile.load

    def load(self: ImageFile.ImageFile) -> Any:
        if self.tile:  # pixels still to decode (a second load() is a no-op)
            decoded.append(self.size)
            width, height = self.size
            assert width * height <= images.MAX_PIXELS, f"decoding {width}x{height} px"
        return real(self)

    monkeypatch.setattr(ImageFile.ImageFile, "load", load)
    return decoded


async def test_a_14000_px_png_is_refused_by_its_header_without_decoding(
    tmp_path: Path, loads: list[tuple[int, int]]
) -> None:
    # 24 kB on disk, 196 million pixels decoded: refused before a single one is.
    (tmp_path / "bomb.png").write_bytes(huge_png(14000, 14000))
    with collecting() as attached:
        text, is_error = await run_tool(tool_context(tmp_path), "read_file", {"path": "bomb.png"})
    assert not is_error and attached == [] and loads == []
    assert "14000x14000 px is 196,000,000 pixels, more than the 25,000,000" in text


async def test_the_images_of_one_turn_are_decoded_one_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    running, most = 0, 0
    real = ImageFile.ImageFile.load

    def load(self: ImageFile.ImageFile) -> Any:
        nonlocal running, most
        running += 1
        most = max(most, running)
        time.sleep(0.05)  # long enough for the other threads to come in, if they may
        try:
            return real(self)
        finally:
            running -= 1

    monkeypatch.setattr(ImageFile.ImageFile, "load", load)
    for n in range(4):
        write_png(tmp_path / f"{n}.png", 2000, 100)
    context = tool_context(tmp_path)
    with collecting():
        done = await asyncio.gather(
            *(run_tool(context, "read_file", {"path": f"{n}.png"}) for n in range(4))
        )
    assert all("scaled to 1568x78" in text for text, _ in done)
    assert most == 1


def test_a_big_jpeg_is_decoded_at_a_reduced_scale(loads: list[tuple[int, int]]) -> None:
    buffer = io.BytesIO()
    Image.new("RGB", (4000, 3000), (20, 120, 220)).save(buffer, "JPEG")
    image = images.prepare("photo.jpg", buffer.getvalue())
    assert image.size == "photo.jpg: JPEG, 4000x3000 px, scaled to 1568x1176"
    assert loads == [(2000, 1500)]  # JPEG's own half-size decoding; never 12 megapixels


def test_a_palette_picture_is_averaged_down_with_its_transparency(
    loads: list[tuple[int, int]],
) -> None:
    # Red above, transparent below, 3000 rows: bands of rows are converted and averaged
    # one at a time, and the seams between them must not show.
    picture = Image.new("RGBA", (3000, 3000), (255, 0, 0, 255))
    picture.paste((0, 0, 255, 0), (0, 1500, 3000, 3000))
    buffer = io.BytesIO()
    picture.quantize(4, method=Image.Quantize.FASTOCTREE).save(buffer, "PNG", transparency=0)
    image = images.prepare("sprite.png", buffer.getvalue())
    assert image.media_type == "image/png" and loads == [(3000, 3000)]
    with Image.open(io.BytesIO(base64.b64decode(image.data))) as scaled:
        assert scaled.mode == "RGBA" and scaled.size == (1568, 1568)
        column = [scaled.getpixel((700, y)) for y in range(0, 1568, 7)]
    assert {pixel[:3] for pixel in column[:100]} == {(255, 0, 0)}
    assert {pixel[3] for pixel in column[:100]} == {255}
    assert {pixel[3] for pixel in column[-100:]} == {0}


def test_a_webp_counts_the_canvases_its_decoder_keeps(loads: list[tuple[int, int]]) -> None:
    # libwebp's animation decoder, Pillow's way in, keeps two canvases beside Pillow's
    # picture: a 24-megapixel WebP took 370 MB. Its header is patched to say 5000x5000.
    frames = [Image.new("RGB", (16, 16), colour) for colour in ("red", "blue")]
    buffer = io.BytesIO()
    frames[0].save(buffer, "WEBP", save_all=True, append_images=frames[1:], lossless=True)
    data = bytearray(buffer.getvalue())
    at = data.index(b"VP8X") + 12  # the canvas's width - 1 and height - 1, 24 bits each
    data[at : at + 6] = (4999).to_bytes(3, "little") * 2
    image = images.prepare("anim.webp", bytes(data))
    assert "5000x5000 px is 25,000,000 pixels, more than the 8,333,333" in image.placeholder
    assert loads == []
