"""Real pictures for the tests, made here (nothing is downloaded)."""

import base64
import os
import struct
import zlib
from collections.abc import Callable


def png(width: int = 2, height: int = 2, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A valid PNG of one colour."""
    return _png(width, height, lambda: bytes(rgb) * width)


def noisy_png(width: int, height: int) -> bytes:
    """A valid PNG of random pixels: it does not compress, so it is as big as a photo of its size."""
    return _png(width, height, lambda: os.urandom(3 * width))


def _png(width: int, height: int, row: Callable[[], bytes]) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + row() for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


JPEG_HEAD = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00"


def data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


def file_part(data: bytes, media_type: str = "image/png", url_type: str | None = None) -> dict[str, str]:
    return {"type": "file", "mediaType": media_type, "url": data_url(url_type or media_type, data)}
