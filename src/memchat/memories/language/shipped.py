"""Files fitted ahead and shipped in `memories/data/` (the extractor's prototype vectors, the pair
classifier), each with the digest of what it was made from: read only when that digest matches."""

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from typing import Any

import numpy as np


def digest_of(source: dict[str, Any]) -> str:
    """The digest of what a shipped file is made from (any JSON-able description)."""
    text = json.dumps(source, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@contextmanager
def shipped_arrays(file: str, digest: str) -> Iterator[Any | None]:
    """The arrays of a shipped `.npz` (relative to `memchat.memories`), or None when it is not
    there or was made from something else."""
    resource = resources.files("memchat.memories").joinpath(file)
    if not resource.is_file():
        yield None
        return
    with resource.open("rb") as handle, np.load(handle) as data:
        yield data if str(data["digest"]) == digest else None
