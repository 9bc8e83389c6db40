"""The chat turn's inserts with the rows that count them: the user message with its conversation's
count (commit point 1), the reply with the conversation's count and summary and the agent list's
preview (commit point 2).

PostgreSQL runs each as one statement (data-modifying WITH), one round trip instead of one per
table; SQLite, which has no INSERT or UPDATE inside WITH, one statement per table on its own
thread, where a statement costs no round trip. Either way they run after the conversation's row
lock (lock_branch) and touch no row that another change locks first, so their order inside the
statement changes no lock order.
"""

from typing import Any

from sqlalchemy import bindparam, exists, select, update
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Connection

from memchat.agents.repository import set_latest_message
from memchat.conversations.messages import insert_message, messages
from memchat.conversations.repository import agents, bump_conversation, bump_with_summary, conversations
from memchat.db.engine import dialect_insert
from memchat.models.message import SUPERSEDED

_VALUE_COLUMNS = [column for column in messages.c if column.name != "seq"]
_VALUES = {column.name: bindparam(f"v_{column.name}", type_=column.type) for column in _VALUE_COLUMNS}
_NOW = _VALUES["created_at_ms"]


def _insert_unless_known(dialect: str) -> Any:
    values = select(*(_VALUES[c.name] for c in _VALUE_COLUMNS)).where(
        ~exists().where(
            messages.c.conversation_id == bindparam("v_conversation_id"),
            messages.c.id == bindparam("v_client_message_id"),
            messages.c.status != SUPERSEDED,
        )
    )
    return (
        dialect_insert(dialect)(messages)
        .from_select(_VALUE_COLUMNS, values)
        .on_conflict_do_nothing(index_elements=["conversation_id", "client_message_id"])
        .returning(messages.c.seq)
    )


_COUNT_ONE = {"message_count": conversations.c.message_count + 1, "last_message_at_ms": _NOW, "updated_at_ms": _NOW}


def _counted(insert: Any) -> Any:
    """PostgreSQL: the insert, and its conversation counted when it inserted a row; the row's seq."""
    inserted = insert.cte("inserted")
    counted = (
        update(conversations)
        .where(conversations.c.id == bindparam("v_conversation_id"), select(inserted.c.seq).exists())
        .values(_COUNT_ONE)
        .cte("counted")
    )
    return select(inserted.c.seq).add_cte(counted)


_INSERT_ONCE_SQLITE = _insert_unless_known("sqlite")
# PostgreSQL, by `once`
_INSERT_COUNTED = {
    True: _counted(_insert_unless_known("postgresql")),
    False: _counted(postgresql.insert(messages).values(_VALUES).returning(messages.c.seq)),
}


def insert_counted(conn: Connection, values: dict[str, Any], *, once: bool) -> int | None:
    """Insert a message (values from message_values) and count it in its conversation, whose
    activity moves to the message's time; its seq. With `once`, only unless a live message of the
    conversation is known by its client id (as its client id, by the unique index, or as its own
    id): None when it was known, and nothing changed. The idempotency check is in the insert: a new
    message costs no lookup."""
    params = {f"v_{name}": value for name, value in values.items()}
    if conn.dialect.name == "postgresql":
        found = conn.execute(_INSERT_COUNTED[once], params).scalar_one_or_none()
    elif once:
        found = conn.execute(_INSERT_ONCE_SQLITE, params).scalar_one_or_none()
    else:
        found = insert_message(conn, values)
    if found is None:
        return None
    if conn.dialect.name != "postgresql":
        bump_conversation(conn, values["conversation_id"], count_delta=1, now_ms=values["created_at_ms"])
    return int(found)


_REPLY_SAVED = (
    update(conversations)
    .where(conversations.c.id == bindparam("v_conversation_id"))
    .values({**_COUNT_ONE, "summary": bindparam("new_summary")})
    .returning(conversations.c.message_count)
    .add_cte(postgresql.insert(messages).values(_VALUES).cte("reply"))
    .add_cte(
        update(agents)
        .where(agents.c.id == bindparam("v_agent_id"))
        .values(latest_message=bindparam("v_content"), latest_message_at_ms=_NOW)
        .cte("preview")
    )
)


def insert_reply(conn: Connection, values: dict[str, Any], *, summary: str) -> int:
    """Insert a reply (values from message_values), count it in its conversation and set the
    conversation's summary, and make it the agent list's preview; the new message count."""
    if conn.dialect.name == "postgresql":
        params = {f"v_{name}": value for name, value in values.items()}
        return int(conn.execute(_REPLY_SAVED, {**params, "new_summary": summary}).scalar_one())
    insert_message(conn, values)
    conversation_id, now = values["conversation_id"], values["created_at_ms"]
    count = bump_with_summary(conn, conversation_id, summary=summary, now_ms=now)
    set_latest_message(conn, agent_id=values["agent_id"], text=values["content"], now_ms=now)
    return count
