"""The chat turn's inserts with the rows that count them: the user message with its conversation's
count (commit point 1), the reply with the conversation's count and summary and the agent list's
preview (commit point 2).

PostgreSQL runs each as one statement (data-modifying WITH: the repositories' own updates, beside
the insert), one round trip instead of one per table; SQLite, which has no INSERT or UPDATE inside
WITH, one statement per table on its own thread, where a statement costs no round trip. Either way
they run after the conversation's row lock (lock_branch) and touch no row that another change locks
first, so their order inside the statement changes no lock order.
"""

from typing import Any

from sqlalchemy import bindparam, exists, select
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Connection

from memchat.agents.repository import SET_PREVIEW, set_latest_message
from memchat.conversations.messages import insert_message, messages
from memchat.conversations.repository import BUMP_ACTIVITY, BUMP_WITH_SUMMARY, bump_conversation, bump_with_summary
from memchat.db.engine import dialect_insert
from memchat.models.message import SUPERSEDED

_VALUE_COLUMNS = [column for column in messages.c if column.name != "seq"]
_VALUES = {column.name: bindparam(f"v_{column.name}", type_=column.type) for column in _VALUE_COLUMNS}


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


def _counted(insert: Any) -> Any:
    """PostgreSQL: the insert, and its conversation counted when it inserted a row; the row's seq."""
    inserted = insert.cte("inserted")
    counted = BUMP_ACTIVITY.where(select(inserted.c.seq).exists()).cte("counted")
    return select(inserted.c.seq).add_cte(counted)


_INSERT_ONCE_SQLITE = _insert_unless_known("sqlite")
# PostgreSQL, by `once`
_INSERT_COUNTED = {
    True: _counted(_insert_unless_known("postgresql")),
    False: _counted(postgresql.insert(messages).values(_VALUES).returning(messages.c.seq)),
}
_REPLY_SAVED = BUMP_WITH_SUMMARY.add_cte(postgresql.insert(messages).values(_VALUES).cte("reply")).add_cte(
    SET_PREVIEW.cte("preview")
)


def _params(values: dict[str, Any]) -> dict[str, Any]:
    """The message's values as the inserts bind them, and the count's: one more, at the message's time."""
    counted = {"conversation_id": values["conversation_id"], "delta": 1, "now": values["created_at_ms"]}
    return {**{f"v_{name}": value for name, value in values.items()}, **counted}


def insert_counted(conn: Connection, values: dict[str, Any], *, once: bool) -> int | None:
    """Insert a message (values from message_values) and count it in its conversation, whose
    activity moves to the message's time; its seq. With `once`, only unless a live message of the
    conversation is known by its client id (as its client id, by the unique index, or as its own
    id): None when it was known, and nothing changed. The idempotency check is in the insert: a new
    message costs no lookup."""
    if conn.dialect.name == "postgresql":
        seq = conn.execute(_INSERT_COUNTED[once], _params(values)).scalar_one_or_none()
        return None if seq is None else int(seq)
    if once:
        seq = conn.execute(_INSERT_ONCE_SQLITE, _params(values)).scalar_one_or_none()
    else:
        seq = insert_message(conn, values)
    if seq is None:
        return None
    bump_conversation(conn, values["conversation_id"], count_delta=1, now_ms=values["created_at_ms"])
    return int(seq)


def insert_reply(conn: Connection, values: dict[str, Any], *, summary: str) -> int:
    """Insert a reply (values from message_values), count it in its conversation and set the
    conversation's summary, and make it the agent list's preview; the new message count."""
    if conn.dialect.name == "postgresql":
        preview = {"preview_agent_id": values["agent_id"], "text": values["content"], "new_summary": summary}
        return int(conn.execute(_REPLY_SAVED, {**_params(values), **preview}).scalar_one())
    insert_message(conn, values)
    conversation_id, now = values["conversation_id"], values["created_at_ms"]
    count = bump_with_summary(conn, conversation_id, summary=summary, now_ms=now)
    set_latest_message(conn, agent_id=values["agent_id"], text=values["content"], now_ms=now)
    return count
