"""Real pictures for the tests, made here (nothing is downloaded)."""

import base64
import struct
import zlib


def png(width: int = 2, height: int = 2, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A valid PNG of one colour."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


JPEG_HEAD = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00"


def data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


def file_part(data: bytes, media_type: str = "image/png", url_type: str | None = None) -> dict[str, str]:
    return {"type": "file", "mediaType": media_type, "url": data_url(url_type or media_type, data)}
