"""Pictures sent with a message: read from the AI SDK's file parts and checked. Pure functions.

A file part's `url` is a data URL (`data:image/png;base64,...`) or a picture already stored
(`/api/files/{id}`, as history returns it: an edited message keeps its pictures). Everything is
checked before anything is stored: too big is a 413, not a picture a 415, a media type that
the bytes contradict (or a URL memchat cannot read) a 422.
"""

import base64
import binascii
import re
from dataclasses import dataclass

from memchat.errors import InvalidInput, MemchatError, PayloadTooLarge

FILE_URL_PREFIX = "/api/files/"
# What the prompt says for a picture when the model is not sent it.
PICTURE_MARK = "[图片]"

# The formats the OpenAI image input takes, told apart by their first bytes.
_SIGNATURES: tuple[tuple[str, bytes, bytes], ...] = (
    ("image/png", b"\x89PNG\r\n\x1a\n", b""),
    ("image/jpeg", b"\xff\xd8\xff", b""),
    ("image/gif", b"GIF8", b""),
    ("image/webp", b"RIFF", b"WEBP"),  # "WEBP" at offset 8
)
PICTURE_TYPES = tuple(media_type for media_type, _, _ in _SIGNATURES)
_DATA_URL = re.compile(r"data:(?P<type>[\w.+-]+/[\w.+-]+)(?P<params>(?:;[\w.+-]+=[\w.+-]+)*);base64,(?P<data>.*)", re.S)
_STORED = re.compile(re.escape(FILE_URL_PREFIX) + r"(?P<id>[0-9a-f-]{36})")


class UnsupportedMediaType(MemchatError):
    status_code = 415
    code = "unsupported_media_type"


@dataclass(frozen=True)
class NewPicture:
    media_type: str
    data: bytes


@dataclass(frozen=True)
class StoredPictureRef:
    """A picture the user sent before, sent again (an edit keeps the edited message's pictures)."""

    file_id: str


IncomingPicture = NewPicture | StoredPictureRef


def sniff_media_type(data: bytes) -> str | None:
    """The picture format the bytes are, or None when they are none of PICTURE_TYPES."""
    for media_type, head, at_8 in _SIGNATURES:
        if data.startswith(head) and (not at_8 or data[8:12] == at_8):
            return media_type
    return None


def read_picture(media_type: str | None, url: str | None, *, max_bytes: int) -> IncomingPicture:
    """One file part: its picture, or the 4xx that says what is wrong with it."""
    if not url:
        raise InvalidInput("a file part has no url", code="file_url_missing")
    stored = _STORED.fullmatch(url)
    if stored is not None:
        return StoredPictureRef(stored["id"])
    found = _DATA_URL.fullmatch(url)
    if found is None:
        raise InvalidInput(
            f"a file part's url must be a base64 data URL or a stored file's {FILE_URL_PREFIX}{{id}}",
            code="file_url_unsupported",
        )
    declared = (media_type or found["type"]).lower()
    if not declared.startswith("image/"):
        raise UnsupportedMediaType(
            f"only pictures can be sent ({', '.join(PICTURE_TYPES)}), not {declared}", code="not_a_picture"
        )
    if len(found["data"]) > (max_bytes + 2) // 3 * 4 + 4:  # refused before decoding
        raise _too_big(max_bytes)
    try:
        data = base64.b64decode(found["data"], validate=True)
    except (binascii.Error, ValueError):
        raise InvalidInput("a file part's data URL is not valid base64", code="file_not_base64") from None
    if len(data) > max_bytes:
        raise _too_big(max_bytes)
    actual = sniff_media_type(data)
    if actual is None:
        raise UnsupportedMediaType(
            f"the file is not a picture memchat takes ({', '.join(PICTURE_TYPES)})", code="not_a_picture"
        )
    if actual != declared or found["type"].lower() != declared:
        raise InvalidInput(f"the file says {declared} but its bytes are {actual}", code="media_type_mismatch")
    return NewPicture(actual, data)


def data_url(media_type: str, data: bytes) -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"


def file_url(file_id: str) -> str:
    return FILE_URL_PREFIX + file_id


def _too_big(max_bytes: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"a picture may be at most {max_bytes} bytes", code="picture_too_large")
