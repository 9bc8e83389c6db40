"""MEMCHAT_SUMMARY=llm: an LLM rolling summary every N turns, in the background after a turn.

The v1 rule summary rolls on every turn as before; the LLM one replaces it when it lands, from
the previous LLM summary plus the turns since (the rules then roll on top of it). A failing or
unusable answer changes nothing: the rule summary stays.
"""

import logging
import re
from collections.abc import Sequence

from memchat.chat.summary import SUMMARY_MAX_CHARS
from memchat.clock import now_ms
from memchat.conversations import messages as message_sql
from memchat.conversations import repository as conversations
from memchat.db.engine import Database
from memchat.errors import UpstreamError
from memchat.llm.client import LLMClient
from memchat.observability import metrics
from memchat.text import normalize

log = logging.getLogger("memchat.summary")

DEFAULT_SUMMARY_MAX_CHARS = 600
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)

_SUMMARY_SYSTEM = "\n".join(
    (
        "你负责为一段用户与聊天 Agent 的对话维护滚动摘要。根据已有摘要和之后新增的对话，写一份新的摘要：",
        "保留仍然重要的事实、用户的情绪与关系进展、未完成的话题，去掉寒暄和重复；"
        "用第三人称（“用户”“Agent”），简洁的中文，不超过 {max_chars} 字。",
        "只输出摘要正文，不要标题、不要解释。",
    )
)


def build_llm_summary_messages(
    previous_summary: str | None,
    turns: Sequence[tuple[str, str]],
    *,
    max_chars: int = DEFAULT_SUMMARY_MAX_CHARS,
) -> list[dict[str, str]]:
    """Messages asking for a new rolling summary; `turns` are (role, content) since the last summary, oldest first."""
    lines = [f"已有摘要：{previous_summary}" if previous_summary else "已有摘要：（无）", "", "新增对话："]
    for role, content in turns:
        text = normalize(content)
        if text is not None:
            lines.append(("用户" if role == "user" else "Agent") + "：" + text)
    return [
        {"role": "system", "content": _SUMMARY_SYSTEM.format(max_chars=max_chars)},
        {"role": "user", "content": "\n".join(lines)},
    ]


def parse_summary(raw: str | None, *, max_chars: int = DEFAULT_SUMMARY_MAX_CHARS * 2) -> str | None:
    """The summary text from a model's answer (fences and a leading label removed), or None if unusable."""
    if raw is None:
        return None
    fenced = _FENCE.search(raw)
    text = normalize(fenced.group(1) if fenced else raw)
    if text is None:
        return None
    text = re.sub(r"^(新的?摘要|摘要|summary)\s*[:：]\s*", "", text, flags=re.IGNORECASE)
    text = re.sub(r"\s+", " ", text).strip()
    return text[:max_chars] or None


# the most messages one summary call reads (older ones are already in the previous summary or lost)
_MAX_MESSAGES = 80


def summary_due(turns_since: int, rule_summary: str | None, every_n_turns: int) -> bool:
    """Every N turns, or as soon as the rule summary has been cut to its last 1600 characters."""
    if turns_since >= every_n_turns:
        return True
    return turns_since > 0 and rule_summary is not None and len(rule_summary) >= SUMMARY_MAX_CHARS


async def summarize_if_due(
    db: Database, llm: LLMClient, conversation_id: str, *, every_n_turns: int, max_chars: int
) -> bool:
    """Run the LLM summary for a conversation when it is due; True when a new summary was stored."""
    async with db.read() as session:
        conversation = await conversations.conversation_by_id(session, conversation_id)
        if conversation is None:
            return False
        through = conversation.llm_summary_through_seq
        messages = await message_sql.live_messages_after(
            session, conversation_id, after_seq=through or 0, limit=_MAX_MESSAGES
        )
        previous = conversation.llm_summary
        rule_summary = conversation.summary
    turns_since = sum(1 for m in messages if m.role == "assistant")
    if not messages or not summary_due(turns_since, rule_summary, every_n_turns):
        return False
    prompt = build_llm_summary_messages(previous, [(m.role, m.content) for m in messages], max_chars=max_chars)
    try:
        raw = await llm.complete(prompt, temperature=0)
    except UpstreamError as exc:
        log.warning("LLM summary failed (%s); the rule summary stays", exc.code)
        return False
    summary = parse_summary(raw, max_chars=SUMMARY_MAX_CHARS)
    if summary is None:
        log.warning("LLM summary answer was empty; the rule summary stays")
        return False
    last_seq = messages[-1].seq
    async with db.write() as session:
        # Turns that landed while the LLM was writing are not in its summary: keep the rule summary
        # that has them, and let the next run catch up from here.
        newest = await message_sql.last_live_seq(session, conversation_id)
        stored = await conversations.store_llm_summary(
            session,
            conversation_id,
            expected_through_seq=through,
            llm_summary=summary,
            through_seq=last_seq,
            set_summary=newest == last_seq,
            now_ms=now_ms(),
        )
    return stored


async def summarize_safely(
    db: Database, llm: LLMClient, conversation_id: str, *, every_n_turns: int, max_chars: int
) -> None:
    try:
        stored = await summarize_if_due(db, llm, conversation_id, every_n_turns=every_n_turns, max_chars=max_chars)
    except Exception:
        metrics.summary_job("failed")
        log.exception("LLM summary failed for conversation %s", conversation_id)
    else:
        metrics.summary_job("stored" if stored else "not_due")
