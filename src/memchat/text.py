"""Text rules shared by everything that stores or prompts with user-visible text."""

import re

# C0 controls except \t (0x09) and \n (0x0a); \r is folded into \n before this runs.
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f]")


def normalize(text: str | None) -> str | None:
    """docs/behaviour.md normalize(): strip, unify newlines, drop C0 controls but \\n and \\t; empty -> None."""
    if text is None:
        return None
    cleaned = text.replace("\r\n", "\n").replace("\r", "\n")
    cleaned = _CONTROL_CHARS.sub("", cleaned).strip()
    return cleaned or None
