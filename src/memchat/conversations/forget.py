"""What a digest summary forgets when a memory leaves (superseded, archived, edited or deleted). Pure.

The digest (`MEMCHAT_SUMMARY=digest`, chat/digest_summary.py) keeps the user's words as lines:
`用户交代：` notes and `用户：` turns. After 我在北京上班 was superseded by 我搬到上海了, a line
still saying 我在北京上班 would put the old value back into every prompt. So the clauses that
said a memory that left are taken out of those lines; a turn whose user line loses a clause
loses its reply line too (the reply may repeat the old value), and a line left empty goes. What
the memory says now, or the memory that replaced it (`kept`), stays: a clause saying it is never
taken out, even where it holds a forgotten clause (我开比亚迪 superseded by 我开比亚迪海豹). The
v1 summary and the LLM summary are prose, not lines: they are left as they are.

An edit or a regenerate puts back the summary a reply kept (`summary_before`), which may be older
than a forget: the restore forgets what the memories that left since said, as their history records
it (chat/user_message.py). A deleted memory's history goes with it, so its delete forgets its words
in those kept summaries too (conversations/repository.py `forget_in_summaries`).
"""

import re
from collections.abc import Iterable

NOTE = "用户交代："
USER = "用户："
AGENT = "Agent："
EARLIER = "早前："
PREFIXES = (NOTE, USER, AGENT, EARLIER)

_CLAUSE = re.compile(r"([，,。！!？?；;…\n]+\s*)")
_NOT_WORD = re.compile(r"[\W_]+")
MIN_CLAUSE_CHARS = 3  # shorter clauses (好的, ok) say nothing of their own


def is_digest(summary: str | None) -> bool:
    """A digest has a line per item, each with its prefix; a v1 summary is one line (用户：… Agent：…)."""
    if not summary:
        return False
    rows = [r for r in summary.split("\n") if r]
    if len(rows) == 1 and not rows[0].startswith((NOTE, AGENT, EARLIER)):
        return False
    return all(r.startswith(PREFIXES) for r in rows)


def _norm(clause: str) -> str:
    text = _NOT_WORD.sub("", clause.casefold())
    return text.removeprefix("我")


def _clauses(text: str) -> list[tuple[str, str]]:
    """(clause, the punctuation after it), in order."""
    parts = _CLAUSE.split(text)
    return [(parts[i], parts[i + 1] if i + 1 < len(parts) else "") for i in range(0, len(parts), 2)]


def forgotten_clauses(statements: Iterable[str]) -> frozenset[str]:
    return frozenset(n for s in statements for clause, _ in _clauses(s) if len(n := _norm(clause)) >= MIN_CLAUSE_CHARS)


def _without(text: str, forgotten: frozenset[str], said_now: frozenset[str]) -> tuple[str, bool]:
    """`text` without its forgotten clauses (those `said_now` stay), and whether any went."""
    kept: list[tuple[str, str]] = []
    removed = False
    for clause, end in _clauses(text):
        norm = _norm(clause)
        if (
            norm
            and len(norm) >= MIN_CLAUSE_CHARS
            and norm not in said_now
            and any(f == norm or (len(f) >= 4 and f in norm) for f in forgotten)
        ):
            removed = True
            continue
        kept.append((clause, end))
    if not removed:
        return text, False
    rebuilt = "".join(clause + end for clause, end in kept).strip()
    return rebuilt.strip("，,；;、 "), True


def forget_statements(summary: str | None, statements: Iterable[str], kept: Iterable[str] = ()) -> str | None:
    """The digest without what `statements` said and `kept` does not say; any other summary unchanged."""
    said_now = forgotten_clauses(kept)
    forgotten = forgotten_clauses(statements) - said_now
    if not forgotten or summary is None or not is_digest(summary):
        return summary
    out: list[str] = []
    drop_reply = False
    for row in summary.split("\n"):
        if row.startswith(AGENT) and drop_reply:
            drop_reply = False
            continue
        drop_reply = False
        for prefix in (NOTE, USER):
            if row.startswith(prefix):
                text, removed = _without(row.removeprefix(prefix), forgotten, said_now)
                if removed:
                    drop_reply = prefix == USER
                    row = prefix + text if _NOT_WORD.sub("", text) else ""
                break
        if row:
            out.append(row)
    return "\n".join(out) or None
