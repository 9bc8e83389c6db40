"""Experimental variants of memchat's hot path, applied in a bench process only, to measure a fix first.

    python -m bench.variant_server --variant NAME --port 18093   (MEMCHAT_* as for memchat serve)
    python -m bench.run --variant NAME

A variant is a function that replaces one hot-path function (monkeypatching src/ in the bench
process only) and is registered in VARIANTS. None is registered now: round 1's `fast-upstream`
(the stream through httpx2 + orjson instead of the openai SDK) led to the aiohttp stream in
memchat.llm.stream and was retired with the redesign; its results stay in
results/variant-fast-upstream.md.
"""

from collections.abc import Callable

VARIANTS: dict[str, Callable[[], None]] = {}


def apply(name: str | None) -> None:
    if name:
        VARIANTS[name]()
