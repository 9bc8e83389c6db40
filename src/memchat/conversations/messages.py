"""All SQL of messages (conversations' own rows are in conversations.repository).

Two kinds of access side by side: the chat turn's statements on a sync `Connection`, built once
(see memchat.db.engine for why), and async helpers for the REST routes and the background jobs.
"""

from typing import Any, cast

from sqlalchemy import Table, bindparam, func, insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.conversations.repository import bump_conversation, lock_branch
from memchat.db.engine import AnyRow
from memchat.models import Message
from memchat.models.base import new_id
from memchat.models.message import (
    COMPLETED,
    EXTRACTION_DONE,
    EXTRACTION_PENDING,
    REPLY_INTERRUPTED,
    REPLY_PENDING,
    SUPERSEDED,
)

messages = cast(Table, Message.__table__)


def message_values(
    *,
    conversation_id: str,
    user_id: str,
    agent_id: str,
    role: str,
    content: str,
    now_ms: int,
    message_id: str | None = None,
    status: str = COMPLETED,
    client_message_id: str | None = None,
    reply_to_id: str | None = None,
    reply_state: str | None = None,
    extraction_state: str | None = None,
    turn_owner: str | None = None,
    turn_lease_until_ms: int | None = None,
    summary_before: str | None = None,
    reasoning: str | None = None,
    picture_count: int = 0,
) -> dict[str, Any]:
    """A message row: every column but seq (the database numbers messages)."""
    return {
        "id": message_id or new_id(),
        "conversation_id": conversation_id,
        "user_id": user_id,
        "agent_id": agent_id,
        "role": role,
        "content": content,
        "status": status,
        "client_message_id": client_message_id,
        "reply_to_id": reply_to_id,
        "reply_state": reply_state,
        "extraction_state": extraction_state,
        "turn_owner": turn_owner,
        "turn_lease_until_ms": turn_lease_until_ms,
        "summary_before": summary_before,
        "reasoning": reasoning,
        "picture_count": picture_count,
        "created_at_ms": now_ms,
        "updated_at_ms": now_ms,
    }


# --- the chat turn's statements (sync Connection, inside Database.run_write) ---

_MESSAGE_COLUMNS = (
    messages.c.id,
    messages.c.picture_count,
    messages.c.seq,
    messages.c.role,
    messages.c.content,
    messages.c.reply_state,
    messages.c.turn_lease_until_ms,
)
_BY_CLIENT_ID = select(*_MESSAGE_COLUMNS).where(
    messages.c.conversation_id == bindparam("conversation_id"),
    messages.c.status != SUPERSEDED,
    (messages.c.client_message_id == bindparam("client_id")) | (messages.c.id == bindparam("client_id")),
)


def find_by_client_id(conn: Connection, conversation_id: str, client_id: str) -> AnyRow | None:
    """A live message the client knows by its own id, or by the id memchat gave it."""
    return conn.execute(_BY_CLIENT_ID, {"conversation_id": conversation_id, "client_id": client_id}).first()


_INSERT_MESSAGE = insert(messages).returning(messages.c.seq)


def insert_message(conn: Connection, values: dict[str, Any]) -> int:
    """Insert a message (values from message_values); returns its seq."""
    seq = conn.execute(_INSERT_MESSAGE, values).scalar_one()
    return int(seq)


_RECENT = (
    select(messages.c.id, messages.c.role, messages.c.content, messages.c.picture_count)
    .where(
        messages.c.conversation_id == bindparam("conversation_id"),
        messages.c.status != SUPERSEDED,
        messages.c.seq < bindparam("before_seq"),
    )
    .order_by(messages.c.seq.desc())
    .limit(bindparam("limit"))
)


def recent_messages(conn: Connection, conversation_id: str, *, limit: int, before_seq: int) -> list[AnyRow]:
    """The newest `limit` live messages before `before_seq`, oldest first: id, role, content, picture_count."""
    if limit <= 0:
        return []
    params = {"conversation_id": conversation_id, "before_seq": before_seq, "limit": limit}
    return list(reversed(conn.execute(_RECENT, params).all()))


def _last_live(role: str) -> Any:
    return (
        select(*_MESSAGE_COLUMNS)
        .where(
            messages.c.conversation_id == bindparam("conversation_id"),
            messages.c.role == role,
            messages.c.status != SUPERSEDED,
        )
        .order_by(messages.c.seq.desc())
        .limit(1)
    )


_LAST_LIVE = {"user": _last_live("user"), "assistant": _last_live("assistant")}


def last_live_message(conn: Connection, conversation_id: str, role: str) -> AnyRow | None:
    return conn.execute(_LAST_LIVE[role], {"conversation_id": conversation_id}).first()


_REPLY_TO = (
    select(messages.c.id, messages.c.content, messages.c.conversation_id, messages.c.status, messages.c.reasoning)
    .where(messages.c.reply_to_id == bindparam("user_message_id"), messages.c.status != SUPERSEDED)
    .order_by(messages.c.seq.desc())
    .limit(1)
)


def current_reply(conn: Connection, user_message_id: str) -> AnyRow | None:
    """The current (not superseded) assistant reply to a user message: id, content, conversation_id,
    status, reasoning."""
    return conn.execute(_REPLY_TO, {"user_message_id": user_message_id}).one_or_none()


_SUPERSEDE = (
    update(messages)
    .where(
        messages.c.conversation_id == bindparam("in_conversation"),
        messages.c.seq >= bindparam("from_seq"),
        messages.c.status != SUPERSEDED,
    )
    .values(status=SUPERSEDED, client_message_id=None, updated_at_ms=bindparam("now"))
)


def supersede_from(conn: Connection, conversation_id: str, from_seq: int, now_ms: int) -> int:
    """Mark every live message at or after `from_seq` superseded and take them off the count.

    Their client ids are released: the AI SDK keeps a message's id when the user edits it.
    Returns how many were superseded.
    """
    params = {"in_conversation": conversation_id, "from_seq": from_seq, "now": now_ms}
    superseded = int(conn.execute(_SUPERSEDE, params).rowcount or 0)
    bump_conversation(conn, conversation_id, count_delta=-superseded, now_ms=now_ms)
    return superseded


# --- turn ownership: a turn in progress is a user message with reply_state pending, its owner and a lease ---


def turn_is_live(message: AnyRow | Message, now_ms: int) -> bool:
    """A row from find_by_client_id or last_live_message, or a loaded message: is its turn being
    answered right now?"""
    lease = message.turn_lease_until_ms
    return bool(message.reply_state == REPLY_PENDING and lease is not None and lease > now_ms)


_LEASE_IS_LIVE = (
    (messages.c.reply_state == REPLY_PENDING)
    & messages.c.turn_lease_until_ms.is_not(None)
    & (messages.c.turn_lease_until_ms > bindparam("now"))
)
_CLAIM = (
    update(messages)
    .where(messages.c.id == bindparam("message_id"), ~_LEASE_IS_LIVE)
    .values(
        reply_state=REPLY_PENDING,
        turn_owner=bindparam("owner"),
        turn_lease_until_ms=bindparam("until"),
        updated_at_ms=bindparam("now"),
    )
)


def claim_turn(conn: Connection, message_id: str, *, owner: str, until_ms: int, now_ms: int) -> bool:
    """Take the turn of a stored user message, unless another live lease holds it. The database
    decides: of two claims at once, one updates the row and the other finds the lease live."""
    params = {"message_id": message_id, "owner": owner, "until": until_ms, "now": now_ms}
    return (conn.execute(_CLAIM, params).rowcount or 0) == 1


_LIVE_IN_CONVERSATION = select(messages.c.id).where(
    messages.c.conversation_id == bindparam("conversation_id"), messages.c.role == "user", _LEASE_IS_LIVE
)


def live_turn_in_conversation(conn: Connection, conversation_id: str, now_ms: int) -> bool:
    return conn.execute(_LIVE_IN_CONVERSATION, {"conversation_id": conversation_id, "now": now_ms}).first() is not None


_OWNED = (
    (messages.c.id == bindparam("message_id"))
    & (messages.c.turn_owner == bindparam("owner"))
    & messages.c.reply_state.in_((REPLY_PENDING, REPLY_INTERRUPTED))
    & (messages.c.status != SUPERSEDED)  # an edit replaced it: a reply to it would be an orphan
)
_FINISH = (
    update(messages)
    .where(_OWNED)
    .values(reply_state=bindparam("new_state"), turn_lease_until_ms=None, updated_at_ms=bindparam("now"))
)


_RENEW_MANY = (
    update(messages)
    .where(
        messages.c.id.in_(bindparam("message_ids", expanding=True)),
        messages.c.turn_owner == bindparam("owner"),
        messages.c.reply_state.in_((REPLY_PENDING, REPLY_INTERRUPTED)),
    )
    .values(turn_lease_until_ms=bindparam("until"))
)


def renew_leases(conn: Connection, message_ids: list[str], *, owner: str, until_ms: int) -> int:
    """Extend the leases of the turns this instance answers (the ones it still owns); how many."""
    renewed = 0
    for start in range(0, len(message_ids), 500):
        params = {"message_ids": message_ids[start : start + 500], "owner": owner, "until": until_ms}
        renewed += int(conn.execute(_RENEW_MANY, params).rowcount or 0)
    return renewed


_RELEASE_TURNS = (
    update(messages)
    .where(
        messages.c.conversation_id == bindparam("in_conversation"),
        messages.c.role == "user",
        messages.c.reply_state == REPLY_PENDING,
    )
    .values(reply_state=REPLY_INTERRUPTED, turn_owner=None, turn_lease_until_ms=None, updated_at_ms=bindparam("now"))
)


def release_turns(conn: Connection, conversation_id: str, now_ms: int) -> int:
    """Take the conversation's turns in progress from their owners (a stop that reached no owner):
    each becomes interrupted with no owner, so its owner, should it wake, stores nothing
    (finish_turn), and a retry of its message answers it again. How many."""
    lock_branch(conn, conversation_id)
    return int(conn.execute(_RELEASE_TURNS, {"in_conversation": conversation_id, "now": now_ms}).rowcount or 0)


def finish_turn(conn: Connection, message_id: str, *, owner: str, reply_state: str, now_ms: int) -> bool:
    """End a turn this instance owns (done, failed). False when another instance has taken it over
    since, or an edit has superseded its user message: then this instance's reply must not be
    stored. An expired lease that nobody took over (marked interrupted meanwhile) still belongs to
    its owner."""
    params = {"message_id": message_id, "owner": owner, "new_state": reply_state, "now": now_ms}
    return (conn.execute(_FINISH, params).rowcount or 0) == 1


# --- async helpers: REST routes and background jobs ---


async def history_page(
    session: AsyncSession, conversation_id: str, *, limit: int, before_seq: int | None, include_superseded: bool
) -> tuple[list[Message], bool]:
    query = select(Message).where(Message.conversation_id == conversation_id)
    if not include_superseded:
        query = query.where(Message.status != SUPERSEDED)
    if before_seq is not None:
        query = query.where(Message.seq < before_seq)
    rows = list((await session.execute(query.order_by(Message.seq.desc()).limit(limit + 1))).scalars().all())
    has_more = len(rows) > limit
    return list(reversed(rows[:limit])), has_more


async def get_message(session: AsyncSession, conversation_id: str, message_id: str) -> Message | None:
    result = await session.execute(
        select(Message).where(Message.conversation_id == conversation_id, Message.id == message_id)
    )
    return result.scalar_one_or_none()


async def get_message_by_id(session: AsyncSession, message_id: str) -> Message | None:
    result = await session.execute(select(Message).where(Message.id == message_id))
    return result.scalar_one_or_none()


async def message_ids_in_state(session: AsyncSession, **where: str) -> list[str]:
    query = select(Message.id)
    for column, value in where.items():
        query = query.where(getattr(Message, column) == value)
    return list((await session.execute(query.order_by(Message.seq))).scalars().all())


async def interrupt_expired_turns(session: AsyncSession, now_ms: int) -> int:
    """Turns whose lease ran out (their instance died or lost the database) become interrupted; how many.

    A turn without a lease was left by a version before leases, or by a crash: expired too.
    """
    lease = Message.turn_lease_until_ms
    result = await session.execute(
        update(Message)
        .where(Message.reply_state == REPLY_PENDING, lease.is_(None) | (lease <= now_ms))
        .values(reply_state=REPLY_INTERRUPTED, updated_at_ms=now_ms)
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


async def claim_extraction(session: AsyncSession, assistant_message_id: str, now_ms: int) -> bool:
    """Flip the turn's extraction pending -> done, conditionally: of two runs of one job, one writes."""
    claimed = await session.execute(
        update(Message)
        .where(Message.id == assistant_message_id, Message.extraction_state == EXTRACTION_PENDING)
        .values(extraction_state=EXTRACTION_DONE, updated_at_ms=now_ms)
    )
    return (claimed.rowcount or 0) > 0  # type: ignore[attr-defined]


async def live_messages_after(
    session: AsyncSession, conversation_id: str, *, after_seq: int, limit: int
) -> list[Message]:
    """The newest `limit` live messages with seq > after_seq, oldest first."""
    query = select(Message).where(
        Message.conversation_id == conversation_id, Message.status != SUPERSEDED, Message.seq > after_seq
    )
    result = await session.execute(query.order_by(Message.seq.desc()).limit(limit))
    return list(reversed(result.scalars().all()))


async def last_live_seq(session: AsyncSession, conversation_id: str) -> int | None:
    result = await session.execute(
        select(func.max(Message.seq)).where(Message.conversation_id == conversation_id, Message.status != SUPERSEDED)
    )
    value = result.scalar_one_or_none()
    return int(value) if value is not None else None
