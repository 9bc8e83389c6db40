"""Lone surrogates in JSON bodies: where a body has strings, and the body with one of them spoiled.

Used by the property tests and by the schema fuzzing's hook (tests/schemathesis_hooks.py).
"""

from typing import Any

from hypothesis import strategies as st

LONE_SURROGATES = st.characters(categories=["Cs"])  # one: two may make a valid pair


def string_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, str):
        return [path]
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in string_paths(item, (*path, key))]
    if isinstance(value, list):
        return [p for index, item in enumerate(value) for p in string_paths(item, (*path, index))]
    return []


def with_surrogate(value: Any, path: tuple[Any, ...], surrogate: str, at: int) -> Any:
    if not path:
        return value[: at % (len(value) + 1)] + surrogate + value[at % (len(value) + 1) :]
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = with_surrogate(value[path[0]], path[1:], surrogate, at)
    return copy
