"""Bulk-seeds a conversation's history and an agent's memories with SQL, through memchat's own tables.

Rows look like what finished turns leave behind (user messages with reply_state done, assistant
messages with extraction done), so start-up recovery and the turn treat them as old history.
"""

import hashlib
import uuid
from typing import Any

from sqlalchemy import insert, update
from sqlalchemy.ext.asyncio import create_async_engine

from memchat.models import Conversation, Memory, Message
from memchat.models.memory import ACTIVE, ARCHIVED
from memchat.models.message import COMPLETED, EXTRACTION_DONE, REPLY_DONE

BATCH = 5_000
MEMORY_TYPES = ("boundary", "preference", "relationship_goal", "conversation_style")
_LINE = "我们聊到周末去哪里散步，公园里的银杏叶已经黄了，你说想拍几张照片。"


async def seed_conversation(
    database_url: str,
    *,
    user_id: str,
    agent_id: str,
    conversation_id: str,
    messages: int,
    memories: int,
    start_ms: int,
) -> None:
    engine = create_async_engine(database_url)
    try:
        async with engine.begin() as conn:
            rows: list[dict[str, Any]] = []
            for i in range(messages):
                is_user = i % 2 == 0
                at = start_ms + i
                rows.append(
                    {
                        "id": str(uuid.uuid4()),
                        "conversation_id": conversation_id,
                        "user_id": user_id,
                        "agent_id": agent_id,
                        "role": "user" if is_user else "assistant",
                        "content": f"{i}: {_LINE}",
                        "status": COMPLETED,
                        "client_message_id": f"seed-{i}" if is_user else None,
                        "reply_to_id": None,
                        "reply_state": REPLY_DONE if is_user else None,
                        "extraction_state": None if is_user else EXTRACTION_DONE,
                        "created_at_ms": at,
                        "updated_at_ms": at,
                    }
                )
                if len(rows) >= BATCH:
                    await conn.execute(insert(Message), rows)
                    rows = []
            if rows:
                await conn.execute(insert(Message), rows)
            end_ms = start_ms + messages
            await conn.execute(
                update(Conversation)
                .where(Conversation.id == conversation_id)
                .values(
                    message_count=Conversation.message_count + messages,
                    last_message_at_ms=end_ms,
                    summary=(_LINE * 40)[-1600:],
                    updated_at_ms=end_ms,
                )
            )
            rows = []
            for i in range(memories):
                content = f"记忆 {i}：{_LINE}"
                at = start_ms + i
                rows.append(
                    {
                        "id": str(uuid.uuid4()),
                        "user_id": user_id,
                        "agent_id": agent_id,
                        "type": MEMORY_TYPES[i % 4],
                        "content": content,
                        "content_hash": hashlib.sha256(content.encode("utf-8")).hexdigest(),
                        "importance": 1 + i % 5,
                        "source_message_id": None,
                        "status": ARCHIVED if i % 10 == 9 else ACTIVE,
                        "created_at_ms": at,
                        "updated_at_ms": at,
                    }
                )
                if len(rows) >= BATCH:
                    await conn.execute(insert(Memory), rows)
                    rows = []
            if rows:
                await conn.execute(insert(Memory), rows)
    finally:
        await engine.dispose()


async def analyze(database_url: str) -> None:
    """Fresh planner statistics after a bulk load, as a long-lived database would have."""
    engine = create_async_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.exec_driver_sql("ANALYZE")
    finally:
        await engine.dispose()
