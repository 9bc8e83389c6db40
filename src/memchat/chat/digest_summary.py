"""MEMCHAT_SUMMARY=digest: a rolling summary without an LLM that does not repeat itself. Pure.

The v1 rule summary (chat/summary.py) appends the last 8 messages again on every turn and keeps
the last 1600 characters: after 30 turns it holds only the last few turns, each several times,
starting mid-sentence. The digest is a list of lines instead, one item a line (whitespace inside
an item is folded to one space, so no item spans two lines):

    用户交代：<sentence>   what the user marked as important, kept after its turn left the window
    用户：<text>           a turn: the user's message, clipped to whole sentences
    Agent：<text>          ... and the reply, clipped the same way

Each turn is added once, when it is stored (a regenerated reply replaces its turn's lines). When
the whole is over 1600 characters the oldest turns leave first, whole; the important sentences of
a leaving user message (boundaries such as 别叫我宝贝 / 不要…, facts such as 我叫… / 我住在…,
anything said with 记住 / 以后) stay as 用户交代 lines: the newest 10 of them, within half the
summary (the other half is always the newest turns). When a memory leaves (superseded, archived,
edited, deleted), its words leave these lines too (conversations/forget.py).
"""

import re
from collections.abc import Sequence

from memchat.chat.summary import SUMMARY_MAX_CHARS, build_conversation_summary
from memchat.conversations.forget import AGENT, EARLIER, NOTE, PREFIXES, USER

MESSAGE_MAX_CHARS = 200
NOTE_MAX_CHARS = 120
MAX_NOTES = 10
NOTES_MAX_CHARS = SUMMARY_MAX_CHARS // 2
EARLIER_MAX_CHARS = 300

_WHITESPACE = re.compile(r"\s+")
# A sentence: text up to its end mark(s) and any closing quote or bracket after them.
_SENTENCE = re.compile(r"[^。！？!?；;…\n]+(?:[。！？!?；;…]+[”’」』）)\"']*)?|[。！？!?；;…]+")
_CLAUSE_END = re.compile(r"[，,、：:]")
_BOUNDARY = r"别|不要|不许|不准|不喜欢|讨厌|受不了|不想|请勿|禁止|底线|边界"
_FACT = (
    r"我叫|我的名字|叫我|我是|我住|我今年|生日|我来自|我老家|我搬|我的(?:猫|狗|宠物|孩子|女儿|儿子|老公|老婆|"
    r"丈夫|妻子|男朋友|女朋友|对象|妈妈|爸爸|工作|职业)|我在.{0,12}(?:工作|上班|上学|读书)"
)
_EXPLICIT = r"记住|记得|以后|一定要|千万"
_IMPORTANT = re.compile(f"{_BOUNDARY}|{_FACT}|{_EXPLICIT}")


def roll_summary(
    strategy: str,
    previous_summary: str | None,
    recent: Sequence[tuple[str, str]],
    user_text: str | None,
    assistant_text: str,
) -> str:
    """The summary a stored turn leaves: the digest for `digest`, else the v1 rules (`llm` rolls
    the rules between its LLM summaries)."""
    if strategy == "digest":
        return build_digest_summary(previous_summary, user_text, assistant_text)
    return build_conversation_summary(previous_summary, recent, user_text, assistant_text)


def build_digest_summary(previous_summary: str | None, user_text: str | None, assistant_text: str) -> str:
    notes, lines = _parse(previous_summary)
    user = _clip(user_text, MESSAGE_MAX_CHARS) if user_text else None
    if user is not None and len(lines) >= 2 and lines[-2] == USER + user and lines[-1].startswith(AGENT):
        del lines[-2:]  # the same turn answered again (regenerate, retry): it appears once
    if user is not None:
        lines.append(USER + user)
    reply = _clip(assistant_text, MESSAGE_MAX_CHARS)
    if reply:
        lines.append(AGENT + reply)
    # Notes keep at most half the summary, so the newest turns always have the other half.
    while _length(notes, lines) > SUMMARY_MAX_CHARS or _length(notes, []) > NOTES_MAX_CHARS:
        if notes and (_length(notes, []) > NOTES_MAX_CHARS or not lines):
            notes.pop(0)
            continue
        leaving = lines.pop(0)
        if leaving.startswith(USER):
            if lines and lines[0].startswith(AGENT):
                lines.pop(0)  # a turn leaves whole
            for sentence in important_sentences(leaving.removeprefix(USER)):
                notes = _add_note(notes, sentence)
    return "\n".join([NOTE + n for n in notes] + lines)


def important_sentences(text: str) -> list[str]:
    """The sentences of a user's message that mark a boundary, a fact about them, or a 记住."""
    return [s for s in split_sentences(text) if _IMPORTANT.search(s)]


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


def _parse(summary: str | None) -> tuple[list[str], list[str]]:
    """(notes, turn lines) of a stored digest. Anything else (a v1 summary, stored before the switch)
    becomes one 早前 line: its last whole sentences."""
    if not summary:
        return [], []
    rows = [r for r in summary.split("\n") if r]
    # A v1 summary is one line (用户：… Agent：… on it); a digest has a line per message.
    v1 = len(rows) == 1 and not rows[0].startswith((AGENT, EARLIER))
    if not v1 and all(r.startswith(PREFIXES) for r in rows):
        notes = [r.removeprefix(NOTE) for r in rows if r.startswith(NOTE)]
        return notes, [r for r in rows if not r.startswith(NOTE)]
    earlier = _tail(_fold(summary), EARLIER_MAX_CHARS)
    return [], [EARLIER + earlier] if earlier else []


def _add_note(notes: list[str], sentence: str) -> list[str]:
    note = _clip(sentence, NOTE_MAX_CHARS)
    kept = [n for n in notes if n != note]  # said again: it moves to the newest place
    return [*kept, note][-MAX_NOTES:]


def _length(notes: list[str], lines: list[str]) -> int:
    rows = len(notes) + len(lines)
    return sum(len(n) + len(NOTE) for n in notes) + sum(map(len, lines)) + max(rows - 1, 0)


def _fold(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


def _clip(text: str | None, limit: int) -> str:
    """The leading whole sentences within `limit`; a first sentence over it is cut at a clause
    (or at the limit) and marked with …."""
    folded = _fold(text or "")
    if len(folded) <= limit:
        return folded
    kept = ""
    for sentence in split_sentences(folded):
        joined = f"{kept} {sentence}" if kept and _needs_space(kept, sentence) else kept + sentence
        if len(joined) > limit:
            break
        kept = joined
    if kept:
        return kept
    head = folded[: limit - 1]
    clauses = list(_CLAUSE_END.finditer(head))
    if clauses and clauses[-1].start() > limit // 3:
        head = head[: clauses[-1].start()]
    return head.rstrip() + "…"


def _tail(text: str, limit: int) -> str:
    """The trailing whole sentences within `limit` (the newest part of an older summary)."""
    kept = ""
    for sentence in reversed(split_sentences(text)):
        joined = f"{sentence} {kept}" if kept and _needs_space(sentence, kept) else sentence + kept
        if len(joined) > limit:
            break
        kept = joined
    return kept


def _needs_space(left: str, right: str) -> bool:
    return left[-1].isascii() and right[0].isascii()
