"""Import an existing conversation as an agent's history, then extract memories over it in the background.

Where it lands: the agent's default conversation when it has no messages yet (a user switching to
memchat brings their history to a new agent), else a new conversation of the agent (named by
`title`). The messages, the count, the agent list's preview and the summary (the configured
MEMCHAT_SUMMARY, rolled over the turns as if they had been chatted) are written in one transaction;
memory extraction then runs turn by turn in the background, in order, and is the import's progress.

The import's id is a hash of the agent and the request body (or of the `Idempotency-Key` header):
the same import sent again finds the first one and changes nothing; the same key with other
messages (roles and texts) is a 422 `idempotency_key_reused`, and changes nothing either.
"""

import hashlib
import json
import logging
from dataclasses import dataclass

from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncSession

from memchat.agents.repository import set_latest_message
from memchat.agents.service import require_agent
from memchat.chat.digest_summary import roll_summary
from memchat.chat.llm_summary import summarize_safely
from memchat.chat.services import ChatServices
from memchat.clock import now_ms
from memchat.conversations import messages
from memchat.conversations import repository as conversations
from memchat.errors import InvalidInput, NotFound
from memchat.files import repository as files
from memchat.files.pictures import IncomingPicture, read_picture
from memchat.imports import repository
from memchat.imports.schemas import MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS, ImportMessage, ImportOut, ImportRequest
from memchat.memories.extraction.run import backfill_vectors, extract_safely
from memchat.models.message import REPLY_DONE
from memchat.settings import LimitSettings
from memchat.text import normalize

log = logging.getLogger("memchat.imports")

DEFAULT_TITLE = "导入的对话"


@dataclass(frozen=True)
class Line:
    role: str
    content: str
    at_ms: int
    pictures: tuple[IncomingPicture, ...] = ()


def import_id_for(agent_id: str, body: ImportRequest, idempotency_key: str | None) -> str:
    source = idempotency_key if idempotency_key is not None else body.model_dump_json(by_alias=True)
    return hashlib.sha256(json.dumps([agent_id, source]).encode()).hexdigest()[:24]


def history_lines(body: ImportRequest, *, limits: LimitSettings, now: int) -> list[Line]:
    """The messages to store, in order, or InvalidInput naming the first bad one. User and assistant
    messages with text are kept (a user message's pictures with it, checked as a chat's are); other
    roles and empty messages are left out. A message without a time takes the one before it (the
    first known one for those at the start; now when none has one)."""
    max_chars = limits.max_message_chars
    kept: list[tuple[str, str, int | None, tuple[IncomingPicture, ...]]] = []
    for i, message in enumerate(body.messages):
        if message.role not in ("user", "assistant"):
            continue
        text = normalize(message.text())
        if text is None:
            continue
        if len(text) > max_chars:
            raise InvalidInput(f"messages.{i}: longer than {max_chars} characters", code="message_too_long")
        at = message.at_ms()
        if at is not None and not MIN_TIMESTAMP_MS <= at <= MAX_TIMESTAMP_MS:
            raise InvalidInput(f"messages.{i}: timestamp out of range (epoch milliseconds, 2000-2100)")
        kept.append((message.role, text, at, _pictures(i, message, limits) if message.role == "user" else ()))
    if not kept:
        raise InvalidInput("no user or assistant message with text to import", code="nothing_to_import")
    known = [at for _, _, at, _ in kept if at is not None]
    last = known[0] if known else now
    lines = []
    for role, text, at, pictures in kept:
        last = at if at is not None else last
        lines.append(Line(role, text, last, pictures))
    return lines


def _pictures(index: int, message: ImportMessage, limits: LimitSettings) -> tuple[IncomingPicture, ...]:
    found = message.pictures()
    if len(found) > limits.max_pictures_per_message:
        raise InvalidInput(
            f"messages.{index}: at most {limits.max_pictures_per_message} pictures", code="too_many_pictures"
        )
    return tuple(read_picture(media_type, url, max_bytes=limits.max_picture_bytes) for media_type, url in found)


async def start_import(
    session: AsyncSession,
    services: ChatServices,
    user_id: str,
    agent_id: str,
    body: ImportRequest,
    idempotency_key: str | None,
) -> tuple[ImportOut, bool]:
    """Store the import (inside the request's transaction). Returns its state and whether it is new."""
    await require_agent(session, user_id, agent_id)
    now = now_ms()
    lines = history_lines(body, limits=services.limits, now=now)
    import_id = import_id_for(agent_id, body, idempotency_key)
    await repository.lock_agent(session, agent_id)
    existing = await repository.conversation_of_import(session, agent_id, import_id)
    if existing is not None:
        if idempotency_key is not None and await repository.import_texts(session, existing, import_id) != [
            (line.role, line.content) for line in lines
        ]:
            raise InvalidInput(
                "this Idempotency-Key was used for an import of other messages; send a new key",
                code="idempotency_key_reused",
            )
        return await import_progress(session, user_id, agent_id, import_id), False
    default = await conversations.get_or_create_default_conversation(
        session, user_id=user_id, agent_id=agent_id, now_ms=now
    )
    if default.message_count == 0:
        conversation_id, is_default = default.id, True
    else:
        created = await conversations.create_conversation(
            session, user_id=user_id, agent_id=agent_id, title=body.title or DEFAULT_TITLE, now_ms=now
        )
        conversation_id, is_default = created.id, False
    strategy, memory = services.summary.strategy, services.memory
    recent_limit = services.limits.recent_message_limit

    def write(conn: Connection) -> None:
        summary: str | None = None
        history: list[tuple[str, str]] = []
        user: tuple[str, str] | None = None  # (id, text) of the user message a reply answers
        for index, line in enumerate(lines):
            values = messages.message_values(
                conversation_id=conversation_id,
                user_id=user_id,
                agent_id=agent_id,
                role=line.role,
                content=line.content,
                now_ms=line.at_ms,
                client_message_id=repository.client_id(import_id, index),
                reply_to_id=user[0] if line.role == "assistant" and user else None,
                reply_state=REPLY_DONE if line.role == "user" else None,
                extraction_state=memory.after_turn(user[1] if user else None).state
                if line.role == "assistant"
                else None,
                summary_before=(summary or "") if line.role == "assistant" else None,
                picture_count=len(line.pictures),
            )
            messages.insert_message(conn, values)
            if line.role == "user":
                user = (values["id"], line.content)
                stored = files.store_pictures(
                    conn, message_id=values["id"], user_id=user_id, pictures=line.pictures, now_ms=line.at_ms
                )
                if not stored:
                    raise InvalidInput(f"a picture of message {index} is not one of this user's", code="file_not_found")
                continue
            # the summary rolls as commit point 2 rolls it, turn by turn
            summary = roll_summary(strategy, summary, history[-recent_limit:], user[1] if user else None, line.content)
            history += [("user", user[1])] if user else []
            history.append(("assistant", line.content))
            user = None
        last = lines[-1]
        conversations.bump_conversation(conn, conversation_id, count_delta=len(lines) - 1, now_ms=last.at_ms)
        if summary is None:
            conversations.bump_conversation(conn, conversation_id, count_delta=1, now_ms=last.at_ms)
        else:
            conversations.bump_with_summary(conn, conversation_id, summary=summary, now_ms=last.at_ms)
        if is_default:
            set_latest_message(conn, agent_id=agent_id, text=last.content, now_ms=last.at_ms)

    await session.run_sync(lambda sync: write(sync.connection()))
    return await import_progress(session, user_id, agent_id, import_id), True


async def import_progress(session: AsyncSession, user_id: str, agent_id: str, import_id: str) -> ImportOut:
    await require_agent(session, user_id, agent_id)
    conversation_id = await repository.conversation_of_import(session, agent_id, import_id)
    if conversation_id is None:
        raise NotFound("import not found", code="import_not_found")
    stored, turns, pending = await repository.import_counts(session, conversation_id, import_id)
    return ImportOut(
        id=import_id,
        conversation_id=conversation_id,
        state="running" if pending else "done",
        messages=stored,
        processed=turns - pending,
        total=turns,
    )


async def run_import(services: ChatServices, agent_id: str, conversation_id: str, import_id: str) -> None:
    """After the commit, by id, safe to run twice (each turn's extraction is claimed once): extraction
    turn by turn in order, then vectors for what lacks one, then the LLM summary when that is the mode.
    A restart finds the turns still pending (chat.leases.recover_unfinished_turns)."""
    db, memory = services.db, services.memory
    async with db.read() as session:
        pending = await repository.pending_turns(session, conversation_id, import_id)
    for message_id in pending:
        await extract_safely(db, memory, message_id)
    if memory.embeddings is not None:
        try:
            await backfill_vectors(db, memory.embeddings, agent_id)
        except Exception:
            log.exception("embedding the memories of agent %s failed", agent_id)
    summary = services.summary
    if summary.strategy == "llm":
        await summarize_safely(
            db, services.llm, conversation_id, every_n_turns=summary.every_n_turns, max_chars=summary.llm_max_chars
        )
