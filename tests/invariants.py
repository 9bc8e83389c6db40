"""What the database must satisfy after any sequence of turns, failures and disconnects."""

from sqlalchemy import func, select

from memchat.db.engine import Database
from memchat.models import Conversation, Memory, Message
from memchat.models.message import EXTRACTION_DONE, REPLY_PENDING, SUPERSEDED


async def assert_invariants(db: Database, sent_user_texts: list[str] | None = None) -> None:
    async with db.read() as session:
        for conversation in (await session.execute(select(Conversation))).scalars():
            live = (
                await session.execute(
                    select(func.count()).where(Message.conversation_id == conversation.id, Message.status != SUPERSEDED)
                )
            ).scalar_one()
            assert conversation.message_count == live, (conversation.id, conversation.message_count, live)
        messages = (await session.execute(select(Message).order_by(Message.seq))).scalars().all()
        by_id = {m.id: m for m in messages}
        for message in messages:
            if message.role == "assistant":
                if message.reply_to_id is not None:
                    assert message.reply_to_id in by_id, "reply to a missing user message"
                    assert by_id[message.reply_to_id].role == "user"
                if message.status != SUPERSEDED:
                    # every stored turn has its summary update and its extraction record
                    assert message.extraction_state == EXTRACTION_DONE, message.id
            else:
                assert message.reply_state != REPLY_PENDING, f"turn left pending: {message.content}"
        for conversation in (await session.execute(select(Conversation))).scalars():
            has_reply = any(m.role == "assistant" and m.conversation_id == conversation.id for m in messages)
            if has_reply:
                assert conversation.summary, conversation.id
        if sent_user_texts is not None:
            stored = sorted(m.content for m in messages if m.role == "user" and m.status != SUPERSEDED)
            assert stored == sorted(sent_user_texts)
        sources = (await session.execute(select(Memory.source_message_id))).scalars().all()
        for source in sources:
            assert source is None or source in by_id, "memory points at a missing message"
