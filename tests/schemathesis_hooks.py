"""schemathesis hooks for tests/test_schemathesis.py (SCHEMATHESIS_HOOKS=tests.schemathesis_hooks)."""

from typing import Any

import schemathesis
from hypothesis import strategies as st

from tests.surrogates import LONE_SURROGATES, string_paths, with_surrogate


@schemathesis.hook
def flatmap_body(context: Any, body: Any) -> st.SearchStrategy[Any]:
    """Every generated JSON body, and now and then the same body with a lone surrogate in one string."""
    paths = string_paths(body)
    if not paths:
        return st.just(body)
    spoiled = st.builds(
        lambda index, surrogate, at: with_surrogate(body, paths[index % len(paths)], surrogate, at),
        st.integers(min_value=0),
        LONE_SURROGATES,
        st.integers(min_value=0),
    )
    return st.just(body) | spoiled
