"""Rolling conversation summary, v1 rules (docs/behaviour.md). Pure function."""

import re
from collections.abc import Sequence

SUMMARY_MAX_CHARS = 1600
SUMMARY_RECENT_MESSAGES = 8
_WHITESPACE = re.compile(r"\s+")


def build_conversation_summary(
    previous_summary: str | None,
    recent: Sequence[tuple[str, str]],
    user_text: str | None,
    assistant_text: str,
) -> str:
    """`recent` is the history read before this turn, as (role, content), oldest first."""
    lines: list[str] = []
    if previous_summary:
        lines.append("既有摘要：" + previous_summary)
    for role, content in recent[-SUMMARY_RECENT_MESSAGES:]:
        lines.append(("用户" if role == "user" else "Agent") + "：" + content)
    if user_text:
        lines.append("用户：" + user_text)
    lines.append("Agent：" + assistant_text)
    # Keep the last 1600 code points: the newest context matters most.
    return _WHITESPACE.sub(" ", "\n".join(lines)).strip()[-SUMMARY_MAX_CHARS:]
