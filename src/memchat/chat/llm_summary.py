"""MEMCHAT_SUMMARY=llm: an LLM rolling summary every N turns, in the background after a turn.

The v1 rule summary rolls on every turn as before; the LLM one replaces it when it lands, from
the previous LLM summary plus the turns since (the rules then roll on top of it). A failing or
unusable answer changes nothing: the rule summary stays.
"""

import logging

from memchat.chat.summary import SUMMARY_MAX_CHARS
from memchat.clock import now_ms
from memchat.conversations import repository as conversations
from memchat.db.engine import Database
from memchat.errors import UpstreamError
from memchat.llm.client import LLMClient
from memchat.memories.llm_ops import build_llm_summary_messages, parse_summary
from memchat.settings import Settings

log = logging.getLogger("memchat.summary")

# the most messages one summary call reads (older ones are already in the previous summary or lost)
_MAX_MESSAGES = 80


def summary_due(turns_since: int, rule_summary: str | None, every_n_turns: int) -> bool:
    """Every N turns, or as soon as the rule summary has been cut to its last 1600 characters."""
    if turns_since >= every_n_turns:
        return True
    return turns_since > 0 and rule_summary is not None and len(rule_summary) >= SUMMARY_MAX_CHARS


async def summarize_if_due(db: Database, settings: Settings, llm: LLMClient, conversation_id: str) -> bool:
    """Run the LLM summary for a conversation when it is due; True when a new summary was stored."""
    async with db.read() as session:
        conversation = await conversations.conversation_by_id(session, conversation_id)
        if conversation is None:
            return False
        through = conversation.llm_summary_through_seq
        messages = await conversations.live_messages_after(
            session, conversation_id, after_seq=through or 0, limit=_MAX_MESSAGES
        )
        previous = conversation.llm_summary
        rule_summary = conversation.summary
    turns_since = sum(1 for m in messages if m.role == "assistant")
    if not messages or not summary_due(turns_since, rule_summary, settings.summary_every_n_turns):
        return False
    prompt = build_llm_summary_messages(
        previous, [(m.role, m.content) for m in messages], max_chars=settings.summary_llm_max_chars
    )
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
        newest = await conversations.last_live_seq(session, conversation_id)
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


async def summarize_safely(db: Database, settings: Settings, llm: LLMClient, conversation_id: str) -> None:
    try:
        await summarize_if_due(db, settings, llm, conversation_id)
    except Exception:
        log.exception("LLM summary failed for conversation %s", conversation_id)
