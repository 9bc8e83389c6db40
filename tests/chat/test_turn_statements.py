"""The statements a plain turn runs at its two commit points (on PostgreSQL each one is a round
trip), and what folding them keeps: the read that finds the conversation holds its row lock, a
message sent again is neither stored nor counted twice."""

import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import asyncpg
import pytest
from sqlalchemy import event, select
from sqlalchemy.engine import Connection, Engine

from memchat.chat.save import save_assistant_turn
from memchat.chat.user_message import store_user_side
from memchat.conversations import messages, turn_writes
from memchat.conversations.repository import agent_with_conversation
from memchat.models import Conversation
from tests.conftest import Running, chat

_WORK = "memchat_test_work"

# per commit point: PostgreSQL folds the conversation's lock into the read that finds it and each
# insert with the rows that count it; SQLite runs them apart (its statements cost no round trip)
PLAIN_TURN = {
    "postgresql": {"store_user_side": 4, "save_assistant_turn": 3},
    "sqlite": {"store_user_side": 5, "save_assistant_turn": 5},
}


def _count_statements(running: Running, counts: Counter[str]) -> Callable[[], None]:
    """Count the statements of each run_write by the name of its work; returns the undo."""
    db = running.db
    original = db.run_write

    async def counting(work: Any, *args: Any, **kwargs: Any) -> Any:
        def counted(conn: Connection, *a: Any, **kw: Any) -> Any:
            conn.info[_WORK] = work.__name__
            try:
                return work(conn, *a, **kw)
            finally:
                conn.info.pop(_WORK, None)

        return await original(counted, *args, **kwargs)

    def on_statement(conn: Connection, *_: Any) -> None:
        if _WORK in conn.info:
            counts[conn.info[_WORK]] += 1

    db.run_write = counting  # type: ignore[method-assign]
    event.listen(Engine, "before_cursor_execute", on_statement)

    def undo() -> None:
        event.remove(Engine, "before_cursor_execute", on_statement)
        db.run_write = original  # type: ignore[method-assign]

    return undo


async def test_a_plain_turn_runs_a_fixed_number_of_statements(
    running: Running, user_token: str, agent: dict[str, Any]
) -> None:
    await chat(running, user_token, agent["id"], "你好")  # the default conversation exists from here on
    counts: Counter[str] = Counter()
    undo = _count_statements(running, counts)
    try:
        for text in ("今天天气不错", "明天呢"):
            response = await chat(running, user_token, agent["id"], text)
            assert response.status_code == 200
    finally:
        undo()
    dialect = "sqlite" if running.db.is_sqlite else "postgresql"
    expected = {work: 2 * n for work, n in PLAIN_TURN[dialect].items()}
    assert {work: counts[work] for work in expected} == expected
    assert store_user_side.__name__ in counts
    assert save_assistant_turn.__name__ in counts
    async with running.db.read() as session:
        count = (await session.execute(select(Conversation.message_count))).scalar_one()
    assert count == 6


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
async def test_the_read_that_finds_the_conversation_holds_its_lock(
    running: Running, user_token: str, agent: dict[str, Any], database_url: str
) -> None:
    """PostgreSQL: commit point 1 takes the conversation's row lock (FOR NO KEY UPDATE, as
    lock_branch does) in the statement that finds the conversation; it is held until commit."""
    await chat(running, user_token, agent["id"], "你好")
    async with running.db.read() as session:
        conversation_id, user_id = (await session.execute(select(Conversation.id, Conversation.user_id))).one()
    other = await asyncpg.connect(database_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        lock = "SELECT id FROM conversations WHERE id = $1 FOR NO KEY UPDATE NOWAIT"
        async with running.db.write_engine.begin() as conn:
            for given in (None, conversation_id):
                found, locked = await conn.run_sync(
                    agent_with_conversation, user_id=user_id, agent_id=agent["id"], conversation_id=given
                )
                assert found is not None
                assert found.conversation_id == conversation_id
                assert locked
            with pytest.raises(asyncpg.LockNotAvailableError):
                await other.fetch(lock, conversation_id)
        assert await other.fetch(lock, conversation_id)  # free once that transaction ended
    finally:
        await other.close()


async def test_a_message_inserted_once_is_stored_and_counted_once(
    running: Running, user_token: str, agent: dict[str, Any]
) -> None:
    await chat(running, user_token, agent["id"], "你好")
    async with running.db.read() as session:
        conversation = (await session.execute(select(Conversation))).scalar_one()
    values = messages.message_values(
        conversation_id=conversation.id,
        user_id=conversation.user_id,
        agent_id=agent["id"],
        role="user",
        content="再说一次",
        now_ms=conversation.updated_at_ms + 1,
        client_message_id=f"m-{uuid.uuid4().hex[:10]}",
    )
    first = await running.db.run_write(turn_writes.insert_counted, values, once=True)
    again = await running.db.run_write(turn_writes.insert_counted, {**values, "id": "another-id"}, once=True)
    assert first is not None
    assert again is None
    async with running.db.read() as session:
        stored = (await session.execute(select(Conversation).where(Conversation.id == conversation.id))).scalar_one()
    assert stored.message_count == conversation.message_count + 1
    assert stored.last_message_at_ms == values["created_at_ms"]
