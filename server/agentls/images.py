"""Images for the model: a file or pasted bytes checked, scaled down to what the providers
take, and encoded once as the image block the conversation keeps.

The conversation keeps the Messages API's shape (`interfaces.Block`): an image is
`{"type": "image", "source": {"type": "base64", "media_type", "data"}}`, in a user message or
inside a tool_result; the Chat Completions adapter turns it into a data-URI `image_url`.
Encoded once, the block's bytes never change, so the prompt's cached prefix stays stable.

Nothing here raises for a bad image: a corrupt file, an unknown format or a model without
vision gives a text placeholder, never a failed task.
"""

from __future__ import annotations

import base64
import io
import math
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .interfaces import Block

if TYPE_CHECKING:  # Pillow is imported on the first image, not at start-up
    from PIL.Image import Image as Picture

LONG_EDGE = 1568
"""Claude's guidance: a longer edge is scaled down by the API anyway, after paying for it."""
MAX_BYTES = 5 * 1024 * 1024
"""The Messages API's limit for one image, encoded (base64 adds a third: kept under it)."""
MAX_INPUT_BYTES = 50 * 1024 * 1024
"""A file larger than this is not opened at all: decoding it could take the server's memory."""
MAX_PIXELS = 25_000_000
"""Pixels an image may have (width x height, read from its header before anything is
decoded), a 6000x4000 photo's: decoded, up to 100 MB. Pillow's own guard only warns below
179 million, and a few hundred bytes of PNG can claim that many."""

MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
"""The formats both providers take, by Pillow's name."""
FORMATS = tuple(MEDIA_TYPES)
"""Pillow's decoders ever tried on an image's bytes."""
SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})
"""File names read_file treats as images (what is inside is checked, not the name)."""

IMAGE_CHARS = 5_000
"""What one image weighs in the context budget, in characters of text: about 1,600 tokens,
what Claude charges for an image of LONG_EDGE pixels (width * height / 750)."""

_DECODING = threading.Lock()
"""One image decoded at a time in this process: the reads of one turn run together, in
threads, and each may hold up to MAX_PIXELS decoded."""

_BAND_ROWS = 256
"""Rows of the full-size picture converted and averaged at once (`_reduced`)."""

NO_VISION = (
    "[image {name} not shown: this model does not take images (the `vision` setting is false); "
    "ask the user to describe it]"
)


@dataclass(frozen=True)
class Image:
    """An image ready for the model, or why it cannot be shown (`placeholder`)."""

    name: str
    media_type: str = ""
    data: str = ""
    """Base64 of the bytes to send."""
    size: str = ""
    """One line for the model and the user: `shot.png: PNG, 3000x2000 px, scaled to 1568x1045`."""
    placeholder: str = ""

    @property
    def shown(self) -> bool:
        return not self.placeholder

    def block(self) -> Block:
        source = {"type": "base64", "media_type": self.media_type, "data": self.data}
        return {"type": "image", "source": source}

    def blocks(self, vision: bool) -> list[Block]:
        """What the model gets: the size line and the image, or a text placeholder."""
        if not self.shown:
            return [{"type": "text", "text": self.placeholder}]
        if not vision:
            return [{"type": "text", "text": NO_VISION.format(name=self.name)}]
        return [{"type": "text", "text": f"[image {self.size}]"}, self.block()]


def is_image_name(path: str | Path) -> bool:
    return Path(path).suffix.lower() in SUFFIXES


def media_type_of(name: str) -> str | None:
    """The media type a file name announces, for the formats both providers take."""
    suffix = Path(name).suffix.lower().lstrip(".")
    return {"jpg": "image/jpeg"}.get(suffix) or (
        f"image/{suffix}" if suffix in ("png", "jpeg", "gif", "webp") else None
    )


def _refused(name: str, why: str) -> Image:
    return Image(name, placeholder=f"[image {name} not shown: {why}]")


def prepare(name: str, data: bytes) -> Image:
    """`data` as an image the providers take: its header checked first (the format, the
    pixels: nothing is decoded past MAX_PIXELS), then checked by decoding it, scaled so its
    long edge is at most LONG_EDGE and its encoding at most MAX_BYTES. CPU work: run it in
    a thread."""
    if len(data) > MAX_INPUT_BYTES:
        return _refused(name, f"{len(data):,} bytes, more than {MAX_INPUT_BYTES:,} are read")
    from PIL import Image as Pillow
    from PIL import UnidentifiedImageError

    # Pillow's own guard (a warning, then a refusal that does not say the size) would stand
    # in front of ours, which is stricter and comes before any pixel is decoded.
    Pillow.MAX_IMAGE_PIXELS = None
    try:
        # Only the formats the model takes are tried: no other of Pillow's decoders (EPS
        # would start Ghostscript) ever sees a repository's or a page's bytes.
        with Pillow.open(io.BytesIO(data), formats=FORMATS) as probe:
            kind, (width, height) = probe.format or "", probe.size
            if width * height > _limit(kind):
                return _refused(name, _too_many(width, height, _limit(kind)))
            probe.verify()  # a truncated or corrupt file fails here, not in the API
        with _DECODING:
            return _decoded(name, data, kind, width, height)
    except UnidentifiedImageError:
        return _refused(name, "not an image the model takes (PNG, JPEG, GIF, WebP)")
    except (OSError, SyntaxError, ValueError) as error:
        return _refused(name, f"the file is corrupt ({error})")


def _limit(kind: str) -> int:
    """Pixels decoded at most of a `kind` of image: Pillow reads WebP through libwebp's
    animation decoder, which holds two canvases of its own beside Pillow's picture."""
    return MAX_PIXELS // 3 if kind == "WEBP" else MAX_PIXELS


def _too_many(width: int, height: int, limit: int) -> str:
    return (
        f"{width}x{height} px is {width * height:,} pixels, more than the {limit:,} "
        "agentls decodes; scale it down first (e.g. to 1568 px on its long edge)"
    )


def _decoded(name: str, data: bytes, kind: str, width: int, height: int) -> Image:
    """The image decoded once, the bytes as they are when they fit, else scaled."""
    from PIL import Image as Pillow

    if kind not in MEDIA_TYPES:  # MPO, a JPEG plugin's other answer
        return _refused(
            name, f"{kind or 'this'} format is not one the model takes (PNG, JPEG, GIF, WebP)"
        )
    size = f"{name}: {kind}, {width}x{height} px"
    fits = max(width, height) <= LONG_EDGE and len(data) * 4 // 3 <= MAX_BYTES
    with Pillow.open(io.BytesIO(data), formats=FORMATS) as picture:
        if not fits:
            # A JPEG decodes straight at 1/2, 1/4 or 1/8 of its size, still at least the
            # size it is scaled to (other formats ignore this).
            scale = LONG_EDGE / max(width, height)
            picture.draft(None, (math.ceil(width * scale), math.ceil(height * scale)))
        picture.load()
        if fits:
            encoded = base64.b64encode(data).decode("ascii")
            return Image(name, MEDIA_TYPES[kind], encoded, f"{size}, {len(data):,} bytes")
        return _scaled(name, picture, size)


def _scaled(name: str, picture: Picture, size: str) -> Image:
    """The picture scaled to LONG_EDGE (and smaller until it fits MAX_BYTES), as PNG when it
    has transparency or few colours, else JPEG (a photo as PNG rarely fits). The decoded
    pixels are the only full-size copy: averaged down a band at a time, then let go."""
    from PIL import Image as Pillow

    mode = "RGBA" if picture.mode in ("RGBA", "LA", "P", "PA") else "RGB"
    factor = max(picture.size) // LONG_EDGE
    if factor > 1 or picture.mode != mode:
        reduced = _reduced(picture, mode, max(factor, 1))
        picture.close()
        picture = reduced
    picture.thumbnail((LONG_EDGE, LONG_EDGE), Pillow.Resampling.LANCZOS)
    edge = LONG_EDGE
    while edge >= 200:
        copy = picture.copy()
        copy.thumbnail((edge, edge), Pillow.Resampling.LANCZOS)
        buffer = io.BytesIO()
        if copy.mode == "RGBA":
            copy.save(buffer, "PNG", optimize=True)
            media_type = "image/png"
        else:
            copy.save(buffer, "JPEG", quality=85)
            media_type = "image/jpeg"
        encoded = base64.b64encode(buffer.getvalue()).decode("ascii")
        if len(encoded) <= MAX_BYTES:
            shown = f"{size}, scaled to {copy.width}x{copy.height}"
            return Image(name, media_type, encoded, shown)
        edge = edge * 3 // 4
    return _refused(name, f"it cannot be made smaller than {MAX_BYTES:,} bytes")


def _reduced(picture: Picture, mode: str, factor: int) -> Picture:
    """`picture` in `mode`, each `factor` x `factor` square of pixels averaged into one, a
    band of rows at a time: converting or reducing it whole (Pillow premultiplies a whole
    RGBA picture to reduce it) would hold a second full-size copy."""
    from PIL import Image as Pillow

    width, height = picture.size
    reduced = Pillow.new(mode, (-(-width // factor), -(-height // factor)))
    rows = factor * max(1, _BAND_ROWS // factor)
    for top in range(0, height, rows):
        band = picture.crop((0, top, width, min(top + rows, height))).convert(mode)
        reduced.paste(band.reduce(factor) if factor > 1 else band, (0, top // factor))
    return reduced


def from_base64(name: str, data: str, media_type: str | None = None) -> Image:
    """An image a client sent as base64 (ACP, agent.runTask); its bytes are checked as a
    file's are, whatever media type it claims."""
    try:
        raw = base64.b64decode(data, validate=True)
    except (ValueError, TypeError):
        return _refused(name, "its data is not base64")
    if media_type is not None and not media_type.startswith("image/"):
        return _refused(name, f"{media_type} is not an image")
    return prepare(name, raw)


def from_file(path: Path, shown_as: str | None = None) -> Image:
    """An image file the user named (`-i shot.png`, `@shot.png`, a URI)."""
    name = shown_as or path.name
    try:
        status = path.stat()
        if not stat.S_ISREG(status.st_mode):  # a FIFO would block the server
            return _refused(name, "it is not a regular file")
        if status.st_size > MAX_INPUT_BYTES:
            return _refused(name, f"larger than {MAX_INPUT_BYTES:,} bytes")
        data = path.read_bytes()
    except OSError as error:
        return _refused(name, f"it cannot be read ({error.strerror or error})")
    return prepare(name, data)


def user_blocks(images: list[Image], vision: bool) -> list[Block]:
    """The user's images as the blocks of their message, each after its size line."""
    return [block for image in images for block in image.blocks(vision)]
