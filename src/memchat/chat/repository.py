"""The chat turn's SQL, in SQLAlchemy Core on a sync Connection.

The turn runs each of its transactions as one synchronous function (Database.run_write): on
SQLite whole on the database thread, one thread hop per transaction instead of several per
statement; on PostgreSQL through AsyncConnection.run_sync. Statements are built once, with bind
parameters, so a turn pays neither ORM unit-of-work nor statement construction (bench/PROFILE.md).
"""

from dataclasses import dataclass
from typing import Any, TypeAlias, cast

from sqlalchemy import Row, Table, bindparam, exists, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from memchat.models import Agent, Conversation, Memory, Message, User
from memchat.models.agent import PROFILE_FIELDS
from memchat.models.base import new_id
from memchat.models.conversation import DEFAULT_SLOT
from memchat.models.memory import ACTIVE
from memchat.models.message import SUPERSEDED

agents = cast(Table, Agent.__table__)
conversations = cast(Table, Conversation.__table__)
messages = cast(Table, Message.__table__)
memories = cast(Table, Memory.__table__)
users = cast(Table, User.__table__)

AnyRow: TypeAlias = Row[*tuple[Any, ...]]

_AGENT_COLUMNS = (agents.c.id, agents.c.name, agents.c.handle, agents.c.default_prompt) + tuple(
    agents.c[name] for name in PROFILE_FIELDS
)


def _agent_with_conversation(conversation_match: Any) -> Any:
    joined = agents.outerjoin(conversations, (conversations.c.agent_id == agents.c.id) & conversation_match)
    return (
        select(
            *_AGENT_COLUMNS,
            conversations.c.id.label("conversation_id"),
            conversations.c.summary.label("conversation_summary"),
        )
        .select_from(joined)
        .where(agents.c.id == bindparam("agent_id"), agents.c.user_id == bindparam("user_id"))
    )


_AGENT_WITH_DEFAULT = _agent_with_conversation(conversations.c.slot == DEFAULT_SLOT)
_AGENT_WITH_GIVEN = _agent_with_conversation(
    (conversations.c.id == bindparam("conversation_id")) & (conversations.c.user_id == bindparam("user_id"))
)


def agent_with_conversation(
    conn: Connection, *, user_id: str, agent_id: str, conversation_id: str | None
) -> AnyRow | None:
    """The user's agent with its default conversation, or with `conversation_id` when given.

    One statement; conversation_id is NULL when the conversation does not exist (yet).
    """
    if conversation_id is None:
        return conn.execute(_AGENT_WITH_DEFAULT, {"agent_id": agent_id, "user_id": user_id}).first()
    params = {"agent_id": agent_id, "user_id": user_id, "conversation_id": conversation_id}
    return conn.execute(_AGENT_WITH_GIVEN, params).first()


_USER_EXISTS = select(users.c.id).where(users.c.id == bindparam("user_id"))


def user_exists(conn: Connection, user_id: str) -> bool:
    return conn.execute(_USER_EXISTS, {"user_id": user_id}).first() is not None


def _upsert(conn: Connection) -> Any:
    return postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert


_DEFAULT_CONVERSATION = select(conversations.c.id, conversations.c.summary).where(
    conversations.c.agent_id == bindparam("agent_id"), conversations.c.slot == DEFAULT_SLOT
)


def create_default_conversation(conn: Connection, *, user_id: str, agent_id: str, now_ms: int) -> AnyRow:
    """Race-free: the unique (agent_id, slot) index decides, ON CONFLICT DO NOTHING loses quietly."""
    statement = (
        _upsert(conn)(conversations)
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


_MESSAGE_COLUMNS = (messages.c.id, messages.c.seq, messages.c.role, messages.c.content)
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
    """Insert a message (values carry its id); returns its seq."""
    seq = conn.execute(_INSERT_MESSAGE, values).scalar_one()
    return int(seq)


_VALUE_COLUMNS = [column for column in messages.c if column.name != "seq"]


def _insert_unless_known(dialect_insert: Any) -> Any:
    values = select(*(bindparam(f"v_{c.name}", type_=c.type) for c in _VALUE_COLUMNS)).where(
        ~exists().where(
            messages.c.conversation_id == bindparam("v_conversation_id"),
            messages.c.id == bindparam("v_client_message_id"),
            messages.c.status != SUPERSEDED,
        )
    )
    return (
        dialect_insert(messages)
        .from_select(_VALUE_COLUMNS, values)
        .on_conflict_do_nothing(index_elements=["conversation_id", "client_message_id"])
        .returning(messages.c.seq)
    )


_INSERT_ONCE = {"sqlite": _insert_unless_known(sqlite.insert), "postgresql": _insert_unless_known(postgresql.insert)}


def insert_message_once(conn: Connection, values: dict[str, Any]) -> int | None:
    """Insert unless a live message of the conversation is known by this client id (as its client
    id, by the unique index, or as its own id); its seq, or None when it was known.

    The idempotency check and the insert in one statement: a new message costs no lookup.
    """
    params = {f"v_{name}": value for name, value in values.items()}
    seq = conn.execute(_INSERT_ONCE[conn.dialect.name], params).scalar_one_or_none()
    return None if seq is None else int(seq)


_BUMP = (
    update(conversations)
    .where(conversations.c.id == bindparam("conversation_id"))
    .values(message_count=conversations.c.message_count + bindparam("delta"), updated_at_ms=bindparam("now"))
)
_BUMP_ACTIVITY = _BUMP.values(last_message_at_ms=bindparam("now"))
_BUMP_WITH_SUMMARY = _BUMP_ACTIVITY.values(summary=bindparam("new_summary"))


def bump_conversation(conn: Connection, conversation_id: str, *, count_delta: int, now_ms: int) -> None:
    """The count moves in SQL (count = count + n), so concurrent turns cannot lose an increment."""
    statement = _BUMP_ACTIVITY if count_delta > 0 else _BUMP
    conn.execute(statement, {"conversation_id": conversation_id, "delta": count_delta, "now": now_ms})


def bump_with_summary(conn: Connection, conversation_id: str, *, summary: str, now_ms: int) -> None:
    params = {"conversation_id": conversation_id, "delta": 1, "now": now_ms, "new_summary": summary}
    conn.execute(_BUMP_WITH_SUMMARY, params)


_RECENT = (
    select(messages.c.role, messages.c.content)
    .where(
        messages.c.conversation_id == bindparam("conversation_id"),
        messages.c.status != SUPERSEDED,
        messages.c.seq < bindparam("before_seq"),
    )
    .order_by(messages.c.seq.desc())
    .limit(bindparam("limit"))
)


def recent_messages(conn: Connection, conversation_id: str, *, limit: int, before_seq: int) -> list[tuple[str, str]]:
    """The newest `limit` live messages before `before_seq`, oldest first, as (role, content)."""
    if limit <= 0:
        return []
    params = {"conversation_id": conversation_id, "before_seq": before_seq, "limit": limit}
    rows = conn.execute(_RECENT, params).all()
    return [(row.role, row.content) for row in reversed(rows)]


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
    select(messages.c.content)
    .where(messages.c.reply_to_id == bindparam("user_message_id"), messages.c.status != SUPERSEDED)
    .order_by(messages.c.seq.desc())
    .limit(1)
)


def reply_text(conn: Connection, user_message_id: str) -> str | None:
    """The text of the current (not superseded) assistant reply to a user message."""
    content = conn.execute(_REPLY_TO, {"user_message_id": user_message_id}).scalar_one_or_none()
    return None if content is None else str(content)


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
    """Mark every live message at or after `from_seq` superseded; returns how many.

    Their client ids are released: the AI SDK keeps a message's id when the user edits it.
    """
    params = {"in_conversation": conversation_id, "from_seq": from_seq, "now": now_ms}
    result = conn.execute(_SUPERSEDE, params)
    return int(result.rowcount or 0)


_SET_REPLY_STATE = (
    update(messages)
    .where(messages.c.id == bindparam("message_id"))
    .values(reply_state=bindparam("new_state"), updated_at_ms=bindparam("now"))
)


def set_reply_state(conn: Connection, message_id: str, reply_state: str, now_ms: int) -> None:
    conn.execute(_SET_REPLY_STATE, {"message_id": message_id, "new_state": reply_state, "now": now_ms})


_SET_PREVIEW = (
    update(agents)
    .where(agents.c.id == bindparam("agent_id"))
    .values(latest_message=bindparam("text"), latest_message_at_ms=bindparam("now"))
)


def set_latest_message(conn: Connection, *, agent_id: str, text: str, now_ms: int) -> None:
    """The agent list's preview of the latest reply."""
    conn.execute(_SET_PREVIEW, {"agent_id": agent_id, "text": text, "now": now_ms})


_MEMORY_COLUMNS = (memories.c.type, memories.c.importance, memories.c.content, memories.c.updated_at_ms)
_MEMORY_ORDER = (memories.c.importance.desc(), memories.c.updated_at_ms.desc(), memories.c.id)
_MEMORIES_FOR_PROMPT = (
    select(*_MEMORY_COLUMNS)
    .where(memories.c.agent_id == bindparam("agent_id"), memories.c.status == ACTIVE)
    .order_by(*_MEMORY_ORDER)
    .limit(bindparam("limit"))
)
_ALL_ACTIVE_WITH_VECTORS = (
    select(*_MEMORY_COLUMNS, memories.c.embedding, memories.c.embedding_model)
    .where(memories.c.agent_id == bindparam("agent_id"), memories.c.status == ACTIVE)
    .order_by(*_MEMORY_ORDER)
)


@dataclass(frozen=True, slots=True)
class ActiveMemory:
    type: str
    importance: int
    content: str
    updated_at_ms: int
    embedding: bytes | None = None
    embedding_model: str | None = None


def memories_for_prompt(conn: Connection, agent_id: str, *, limit: int) -> list[ActiveMemory]:
    """SPEC step 6: active memories, importance desc, updated_at_ms desc, the first `limit`."""
    rows = conn.execute(_MEMORIES_FOR_PROMPT, {"agent_id": agent_id, "limit": limit})
    return [ActiveMemory(r.type, r.importance, r.content, r.updated_at_ms) for r in rows]


def active_memories_with_vectors(conn: Connection, agent_id: str) -> list[ActiveMemory]:
    """Every active memory of the agent with its vector, in the v1 order (ranked recall picks from them)."""
    rows = conn.execute(_ALL_ACTIVE_WITH_VECTORS, {"agent_id": agent_id})
    return [
        ActiveMemory(r.type, r.importance, r.content, r.updated_at_ms, r.embedding, r.embedding_model) for r in rows
    ]
