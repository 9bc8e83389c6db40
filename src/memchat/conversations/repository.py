"""All SQL of conversations (their messages are in conversations.messages).

Two kinds of access side by side: the chat turn's statements on a sync `Connection`, built once
(see memchat.db.engine for why), and async helpers for the REST routes and the background jobs.
"""

from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import Table, bindparam, delete, func, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.conversations.forget import forget_statements
from memchat.db.engine import AnyRow, dialect_insert
from memchat.models import Agent, Conversation, Message, User
from memchat.models.base import new_id
from memchat.models.conversation import DEFAULT_SLOT
from memchat.models.message import SUPERSEDED
from memchat.schemas import PROFILE_FIELDS

agents = cast(Table, Agent.__table__)
_users = cast(Table, User.__table__)
conversations = cast(Table, Conversation.__table__)
_messages = cast(Table, Message.__table__)


# --- the chat turn's statements (sync Connection, inside Database.run_write) ---

_AGENT_COLUMNS = (agents.c.id, agents.c.name, agents.c.handle, agents.c.default_prompt) + tuple(
    agents.c[name] for name in PROFILE_FIELDS
)


def _agent_with_conversation(conversation_match: Any, *, locked: bool) -> Any:
    with_users = agents.join(_users, _users.c.id == agents.c.user_id)
    condition = (conversations.c.agent_id == agents.c.id) & conversation_match
    # PostgreSQL cannot lock the nullable side of an outer join: the locked form finds only an
    # existing conversation
    joined = with_users.join(conversations, condition) if locked else with_users.outerjoin(conversations, condition)
    statement = (
        select(
            *_AGENT_COLUMNS,
            conversations.c.id.label("conversation_id"),
            conversations.c.summary.label("conversation_summary"),
            _users.c.tokens_valid_after_ms.label("tokens_valid_after_ms"),
        )
        .select_from(joined)
        .where(agents.c.id == bindparam("agent_id"), agents.c.user_id == bindparam("user_id"))
    )
    return statement.with_for_update(key_share=True, of=conversations) if locked else statement


_DEFAULT_MATCH = conversations.c.slot == DEFAULT_SLOT
_GIVEN_MATCH = (conversations.c.id == bindparam("conversation_id")) & (conversations.c.user_id == bindparam("user_id"))
# by whether a conversation id is given
_AGENT_WITH = {
    False: _agent_with_conversation(_DEFAULT_MATCH, locked=False),
    True: _agent_with_conversation(_GIVEN_MATCH, locked=False),
}
_AGENT_WITH_LOCKED = {
    False: _agent_with_conversation(_DEFAULT_MATCH, locked=True),
    True: _agent_with_conversation(_GIVEN_MATCH, locked=True),
}


def agent_with_conversation(
    conn: Connection, *, user_id: str, agent_id: str, conversation_id: str | None
) -> tuple[AnyRow | None, bool]:
    """The user's agent with its default conversation, or with `conversation_id` when given, and
    the user's tokens_valid_after_ms (for the login token's check); conversation_id is NULL when
    the conversation does not exist (yet). And whether the conversation is already locked as
    lock_branch locks it, its summary read under the lock.

    PostgreSQL: one statement that takes the lock (FOR NO KEY UPDATE OF conversations) when the
    conversation exists; when it finds none (not yet, not the user's, no such agent), a second one
    without the lock says which. SQLite: one statement; the write transaction is the lock.
    """
    given = conversation_id is not None
    params = {"agent_id": agent_id, "user_id": user_id, "conversation_id": conversation_id}
    if conn.dialect.name == "postgresql":
        locked = conn.execute(_AGENT_WITH_LOCKED[given], params).first()
        if locked is not None:
            return locked, True
        return conn.execute(_AGENT_WITH[given], params).first(), False
    found = conn.execute(_AGENT_WITH[given], params).first()
    return found, found is not None and found.conversation_id is not None


_DEFAULT_CONVERSATION = select(conversations.c.id, conversations.c.summary).where(
    conversations.c.agent_id == bindparam("agent_id"), conversations.c.slot == DEFAULT_SLOT
)


def create_default_conversation(conn: Connection, *, user_id: str, agent_id: str, now_ms: int) -> AnyRow:
    """Race-free: the unique (agent_id, slot) index decides, ON CONFLICT DO NOTHING loses quietly."""
    statement = (
        dialect_insert(conn)(conversations)
        .values(
            id=new_id(),
            user_id=user_id,
            agent_id=agent_id,
            slot=DEFAULT_SLOT,
            summary=None,
            message_count=0,
            last_message_at_ms=None,
            created_at_ms=now_ms,
            updated_at_ms=now_ms,
        )
        .on_conflict_do_nothing(index_elements=["agent_id", "slot"])
    )
    conn.execute(statement)
    created = conn.execute(_DEFAULT_CONVERSATION, {"agent_id": agent_id}).first()
    assert created is not None  # inserted above or by the racing transaction that won
    return created


_BUMP = (
    update(conversations)
    .where(conversations.c.id == bindparam("conversation_id"))
    .values(message_count=conversations.c.message_count + bindparam("delta"), updated_at_ms=bindparam("now"))
)
# a message counted, and the conversation's activity moved to it; with the summary (commit point 2).
# `conversations.turn_writes` puts them in one statement with their inserts on PostgreSQL.
BUMP_ACTIVITY = _BUMP.values(last_message_at_ms=bindparam("now"))
BUMP_WITH_SUMMARY = BUMP_ACTIVITY.values(summary=bindparam("new_summary")).returning(conversations.c.message_count)


_SET_SUMMARY = (
    update(conversations)
    .where(conversations.c.id == bindparam("conversation_id"))
    .values(summary=bindparam("new_summary"))
)


def set_summary(conn: Connection, conversation_id: str, summary: str | None) -> None:
    conn.execute(_SET_SUMMARY, {"conversation_id": conversation_id, "new_summary": summary})


def bump_conversation(conn: Connection, conversation_id: str, *, count_delta: int, now_ms: int) -> None:
    """The count moves in SQL (count = count + n), so concurrent turns cannot lose an increment."""
    statement = BUMP_ACTIVITY if count_delta > 0 else _BUMP
    conn.execute(statement, {"conversation_id": conversation_id, "delta": count_delta, "now": now_ms})


# FOR NO KEY UPDATE (PostgreSQL): turns inserting messages of this conversation (a foreign-key
# share lock) go on; a plain FOR UPDATE waits for them while they wait to bump the count: deadlock.
_SUMMARY_FOR_UPDATE = (
    select(conversations.c.summary)
    .where(conversations.c.id == bindparam("conversation_id"))
    .with_for_update(key_share=True)
)


def lock_branch(conn: Connection, conversation_id: str) -> str | None:
    """Take the conversation's row lock until commit (PostgreSQL; SQLite has one writer anyway);
    its summary as it stands under the lock.

    Every change to the conversation's live branch takes it first: commit point 1 (a new message,
    an edit, a regenerate, a retry; in the statement that finds the conversation, see
    agent_with_conversation) and commit point 2 (the reply). So they happen one after the
    other, each reading what the one before committed, and the database, not timing, picks which
    of two racing changes wins: the second sees the first's live turn and is a 409. Taken first,
    before any message row, it also keeps them from deadlocking on each other's rows."""
    return summary_for_update(conn, conversation_id)


_FIRST_LIVE_REPLY_FROM = (
    select(_messages.c.summary_before, _messages.c.created_at_ms)
    .where(
        _messages.c.conversation_id == bindparam("in_conversation"),
        _messages.c.seq >= bindparam("from_seq"),
        _messages.c.role == "assistant",
        _messages.c.status != SUPERSEDED,
    )
    .order_by(_messages.c.seq)
    .limit(1)
)
_LIVE_TEXTS_FROM = select(_messages.c.content).where(
    _messages.c.conversation_id == bindparam("in_conversation"),
    _messages.c.seq >= bindparam("from_seq"),
    _messages.c.status != SUPERSEDED,
)


def summary_before_turns_from(
    conn: Connection, conversation_id: str, from_seq: int
) -> tuple[bool, str | None, int | None]:
    """The summary as it stood before the first live reply at or after `from_seq` was rolled in,
    and when that reply kept it: (True, summary or None, ms) when that reply kept it, (False, None,
    None) when there is no reply or it was stored before replies kept it."""
    params = {"in_conversation": conversation_id, "from_seq": from_seq}
    row = conn.execute(_FIRST_LIVE_REPLY_FROM, params).first()
    if row is None or row.summary_before is None:
        return False, None, None
    return True, row.summary_before or None, row.created_at_ms


def live_texts_from(conn: Connection, conversation_id: str, from_seq: int) -> list[str]:
    params = {"in_conversation": conversation_id, "from_seq": from_seq}
    return [str(text) for text in conn.execute(_LIVE_TEXTS_FROM, params).scalars()]


def summary_for_update(conn: Connection, conversation_id: str) -> str | None:
    """The stored summary, the row locked until commit (PostgreSQL; SQLite has one writer anyway): a turn
    rolls its summary on what concurrent turns committed, never over it."""
    value = conn.execute(_SUMMARY_FOR_UPDATE, {"conversation_id": conversation_id}).scalar_one_or_none()
    return None if value is None else str(value)


def bump_with_summary(conn: Connection, conversation_id: str, *, summary: str, now_ms: int) -> int:
    """Count one message and set the summary; the new message count."""
    params = {"conversation_id": conversation_id, "delta": 1, "now": now_ms, "new_summary": summary}
    return int(conn.execute(BUMP_WITH_SUMMARY, params).scalar_one())


# --- async helpers: REST routes and background jobs ---


async def get_default_conversation(session: AsyncSession, user_id: str, agent_id: str) -> Conversation | None:
    result = await session.execute(
        select(Conversation).where(
            Conversation.agent_id == agent_id, Conversation.user_id == user_id, Conversation.slot == DEFAULT_SLOT
        )
    )
    return result.scalar_one_or_none()


async def get_or_create_default_conversation(
    session: AsyncSession, *, user_id: str, agent_id: str, now_ms: int
) -> Conversation:
    existing = await get_default_conversation(session, user_id, agent_id)
    if existing is not None:
        return existing
    await session.run_sync(
        lambda sync: create_default_conversation(sync.connection(), user_id=user_id, agent_id=agent_id, now_ms=now_ms)
    )
    created = await get_default_conversation(session, user_id, agent_id)
    assert created is not None
    return created


async def conversation_by_id(session: AsyncSession, conversation_id: str) -> Conversation | None:
    return await session.get(Conversation, conversation_id)


async def users_conversation(session: AsyncSession, user_id: str, conversation_id: str) -> Conversation | None:
    result = await session.execute(
        select(Conversation).where(Conversation.id == conversation_id, Conversation.user_id == user_id)
    )
    return result.scalar_one_or_none()


async def list_conversations(session: AsyncSession, user_id: str, agent_id: str) -> list[Conversation]:
    """The agent's conversations, the most recently active first (new, empty ones by creation)."""
    activity = func.coalesce(Conversation.last_message_at_ms, Conversation.created_at_ms)
    result = await session.execute(
        select(Conversation)
        .where(Conversation.agent_id == agent_id, Conversation.user_id == user_id)
        .order_by(activity.desc(), Conversation.created_at_ms.desc(), Conversation.id)
    )
    return list(result.scalars().all())


async def create_conversation(
    session: AsyncSession, *, user_id: str, agent_id: str, title: str | None, now_ms: int
) -> Conversation:
    """A conversation beside the default one (slot NULL: any number of them per agent)."""
    conversation = Conversation(
        id=new_id(),
        user_id=user_id,
        agent_id=agent_id,
        slot=None,
        title=title,
        summary=None,
        message_count=0,
        last_message_at_ms=None,
        created_at_ms=now_ms,
        updated_at_ms=now_ms,
    )
    session.add(conversation)
    await session.flush()
    return conversation


async def delete_conversation(session: AsyncSession, conversation_id: str) -> None:
    """Its messages go with it (ON DELETE CASCADE); memories stay: they belong to the agent."""
    await session.execute(delete(Conversation).where(Conversation.id == conversation_id))


async def store_llm_summary(
    session: AsyncSession,
    conversation_id: str,
    *,
    expected_through_seq: int | None,
    llm_summary: str,
    through_seq: int,
    set_summary: bool,
    now_ms: int,
) -> bool:
    """Store an LLM summary unless another one landed meanwhile (compare-and-set on through_seq)."""
    values: dict[str, object] = {"llm_summary": llm_summary, "llm_summary_through_seq": through_seq}
    if set_summary:
        values["summary"] = llm_summary
        values["updated_at_ms"] = now_ms
    through = Conversation.llm_summary_through_seq
    condition = through.is_(None) if expected_through_seq is None else through == expected_through_seq
    result = await session.execute(
        update(Conversation).where(Conversation.id == conversation_id, condition).values(**values)
    )
    return (result.rowcount or 0) > 0  # type: ignore[attr-defined]


async def forget_in_summaries(
    session: AsyncSession,
    agent_id: str,
    statements: list[str],
    kept: Sequence[str] = (),
    *,
    restore_points: bool = False,
) -> int:
    """Take what `statements` said out of the digest summaries of the agent's conversations (a memory
    that said it left, or said it otherwise before a rewrite), but never what `kept` (the memories
    that say it now) says; the rows are locked as commit point 2 locks them (FOR NO KEY UPDATE on
    PostgreSQL: a turn rolling its summary waits for this transaction and rolls on what it left).
    With `restore_points` (a deleted memory, whose history cannot tell a restore what it said), the
    summaries the live replies keep for an edit or a regenerate to put back forget it too. The
    number of conversations changed."""
    if not statements:
        return 0
    query = select(conversations.c.id, conversations.c.summary).where(conversations.c.agent_id == agent_id)
    if not restore_points:
        query = query.where(conversations.c.summary.is_not(None))
    changed = 0
    for conversation_id, summary in (await session.execute(query.with_for_update(key_share=True))).all():
        forgotten = forget_statements(summary, statements, kept)
        if forgotten != summary:
            await session.execute(
                update(conversations).where(conversations.c.id == conversation_id).values(summary=forgotten)
            )
            changed += 1
    if restore_points:
        await _forget_in_restore_points(session, agent_id, statements, kept)
    return changed


_RESTORE_POINTS = (
    select(_messages.c.id, _messages.c.summary_before)
    .select_from(conversations.join(_messages, _messages.c.conversation_id == conversations.c.id))
    .where(
        conversations.c.agent_id == bindparam("agent_id"),
        _messages.c.role == "assistant",
        _messages.c.status != SUPERSEDED,
        _messages.c.summary_before.is_not(None),
        _messages.c.summary_before != "",
    )
)


async def _forget_in_restore_points(
    session: AsyncSession, agent_id: str, statements: list[str], kept: Sequence[str]
) -> None:
    """The live replies' `summary_before` without what `statements` said (their conversations are
    locked: no edit or regenerate restores one meanwhile)."""
    for message_id, summary in (await session.execute(_RESTORE_POINTS, {"agent_id": agent_id})).all():
        forgotten = forget_statements(summary, statements, kept)
        if forgotten != summary:
            await session.execute(
                update(_messages).where(_messages.c.id == message_id).values(summary_before=forgotten or "")
            )
