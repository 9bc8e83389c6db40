"""One POST /api/chat, top to bottom as SPEC.md's turn reads.

Commit points: (1) the user message, before any LLM call; (2) the assistant turn, when the
upstream stream ends. No session is held open across the stream. The upstream is consumed by a
task of its own (TurnRelay), so a client that goes away cannot cancel the save.
"""

import asyncio
import logging
from collections.abc import AsyncIterator

from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import PlainTextResponse, Response, StreamingResponse

from memchat.agents import repository as agents
from memchat.auth.repository import get_user
from memchat.chat.context import TurnContext
from memchat.chat.extraction import ExtractionTools, extract_inline, run_after_turn
from memchat.chat.prompt import PromptMemory, PromptProfile, build_prompt_messages
from memchat.chat.save import save_assistant_turn
from memchat.chat.schemas import ChatRequest
from memchat.clock import now_ms
from memchat.conversations import repository as conversations
from memchat.errors import (
    Conflict,
    InvalidInput,
    NotFound,
    PayloadTooLarge,
    TooManyRequests,
    Unauthorized,
    UpstreamError,
)
from memchat.llm.client import STREAM_ERRORS, LLMStream, upstream_error
from memchat.memories import repository as memories
from memchat.memories.service import recall_for_prompt
from memchat.models import Agent, Conversation, Message
from memchat.models.agent import PROFILE_FIELDS
from memchat.models.memory import ACTIVE
from memchat.models.message import COMPLETED, EXTRACTION_DONE, EXTRACTION_PENDING, REPLY_FAILED, REPLY_PENDING
from memchat.state import AppState
from memchat.text import normalize

log = logging.getLogger("memchat.turn")

STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
_SAVE_ATTEMPTS = 3


class _Replay(Exception):
    """A retried send whose reply is already stored: answer with it, start nothing."""

    def __init__(self, text: str):
        self.text = text


def _validate(state: AppState, request: ChatRequest) -> str | None:
    """Limits and the user's text: the normalized text of the last user message, if any."""
    settings = state.settings
    if len(request.messages) > settings.max_messages_per_request:
        raise InvalidInput(
            f"at most {settings.max_messages_per_request} messages per request", code="too_many_messages"
        )
    for message in request.messages:
        if len(message.text()) > settings.max_message_chars:
            raise PayloadTooLarge(
                f"a message is longer than {settings.max_message_chars} characters", code="message_too_long"
            )
    last_user = request.last_user_message()
    if request.trigger == "regenerate-message":
        return None
    if last_user is None:
        raise InvalidInput("the request has no user message", code="no_user_message")
    text = normalize(last_user.text())
    if text is None:
        raise InvalidInput("the user message is empty", code="empty_message")
    return text


def _profile(agent: Agent | None, request: ChatRequest) -> PromptProfile | None:
    override = request.conversation.fields_set() if request.conversation is not None else {}
    if agent is None:
        return PromptProfile().overridden(override) if request.conversation is not None else None
    stored = PromptProfile(name=agent.name, handle=agent.handle, **{f: getattr(agent, f) for f in PROFILE_FIELDS})
    return stored.overridden(override)


async def _require_user(session: AsyncSession, user_id: str) -> None:
    if await get_user(session, user_id) is None:
        raise Unauthorized("invalid token", code="invalid_token")


async def _conversation(session: AsyncSession, request: ChatRequest, agent: Agent, user_id: str) -> Conversation:
    if request.conversation_id is not None:
        conversation = await conversations.get_conversation(session, user_id, request.conversation_id)
        if conversation is None or conversation.agent_id != agent.id:
            raise NotFound("conversation not found", code="conversation_not_found")
        return conversation
    return await conversations.get_or_create_default_conversation(
        session, user_id=user_id, agent_id=agent.id, now_ms=now_ms()
    )


async def _answer_again(state: AppState, session: AsyncSession, user_message: Message) -> Message:
    """A retried send of a stored user message: 409 while streaming, the stored reply, or answer again."""
    if user_message.id in state.live_turns:
        raise Conflict("this message is still being answered", code="turn_in_progress")
    reply = await conversations.reply_to(session, user_message.id)
    if reply is not None:
        raise _Replay(reply.content)
    await conversations.set_message_fields(session, user_message.id, reply_state=REPLY_PENDING)
    return user_message


async def _regenerate_target(state: AppState, session: AsyncSession, conversation: Conversation) -> Message:
    """The last assistant reply is superseded; the turn answers its user message again."""
    last_assistant = await conversations.last_live_message(session, conversation.id, "assistant")
    last_user = await conversations.last_live_message(session, conversation.id, "user")
    if last_user is None:
        raise InvalidInput("there is nothing to regenerate", code="nothing_to_regenerate")
    if last_user.id in state.live_turns:
        raise Conflict("the last message is still being answered", code="turn_in_progress")
    if last_assistant is not None and last_assistant.seq > last_user.seq:
        now = now_ms()
        superseded = await conversations.supersede_from(session, conversation.id, last_assistant.seq, now)
        await conversations.bump_conversation(session, conversation.id, count_delta=-superseded, now_ms=now)
    return last_user


async def _insert_user_message(
    session: AsyncSession, conversation: Conversation, agent: Agent, user_id: str, text: str, client_id: str | None
) -> Message:
    now = now_ms()
    message = await conversations.insert_message(
        session,
        Message(
            conversation_id=conversation.id,
            user_id=user_id,
            agent_id=agent.id,
            role="user",
            content=text,
            status=COMPLETED,
            client_message_id=client_id,
            reply_state=REPLY_PENDING,
            created_at_ms=now,
            updated_at_ms=now,
        ),
    )
    await conversations.bump_conversation(session, conversation.id, count_delta=1, now_ms=now)
    return message


async def _store_user_side(
    state: AppState,
    session: AsyncSession,
    request: ChatRequest,
    agent: Agent,
    user_id: str,
    text: str | None,
    idempotency_key: str | None,
) -> tuple[Conversation, Message]:
    """Steps 3-4: the conversation, then the user message this turn answers."""
    conversation = await _conversation(session, request, agent, user_id)
    if request.trigger == "regenerate-message":
        return conversation, await _regenerate_target(state, session, conversation)
    assert text is not None
    last_user = request.last_user_message()
    client_id = idempotency_key or (last_user.id if last_user is not None else None)
    if request.message_id:
        # An edited user message: it and everything after it are replaced. The AI SDK keeps the
        # edited message's id, so the same id with the same text again is a retry, not an edit.
        edited = await conversations.find_by_client_id(session, conversation.id, request.message_id)
        if edited is None or edited.role != "user":
            raise NotFound("the edited message was not found", code="message_not_found")
        if edited.content == text:
            return conversation, await _answer_again(state, session, edited)
        now = now_ms()
        superseded = await conversations.supersede_from(session, conversation.id, edited.seq, now)
        await conversations.bump_conversation(session, conversation.id, count_delta=-superseded, now_ms=now)
    elif client_id:
        existing = await conversations.find_by_client_id(session, conversation.id, client_id)
        if existing is not None and existing.role == "user":
            return conversation, await _answer_again(state, session, existing)
    return conversation, await _insert_user_message(session, conversation, agent, user_id, text, client_id)


async def prepare_turn(state: AppState, user_id: str, request: ChatRequest, idempotency_key: str | None) -> TurnContext:
    """Everything up to the LLM call, committed in one transaction (commit point 1)."""
    text = _validate(state, request)
    settings = state.settings
    if request.agent_id is None:
        # Compatibility path: nothing stored, the client's messages are the history.
        async with state.db.read() as session:
            await _require_user(session, user_id)
        if request.trigger == "regenerate-message" and request.last_user_message() is None:
            raise InvalidInput("the request has no user message", code="no_user_message")
        client_history = [(m.role, m.text()) for m in request.messages if m.role != "system"]
        turn = TurnContext(user_id, None, None, None, text, None, recent=[])
        turn.prompt = build_prompt_messages(
            default_prompt=None,
            memories=[],
            summary=None,
            profile=_profile(None, request),
            history=client_history,
            latest_user_text=None,
        )
        return turn

    async with state.db.write() as session:
        agent = await agents.get_agent(session, user_id, request.agent_id)
        if agent is None:
            await _require_user(session, user_id)  # a deleted user's token is a 401, not a 404
            raise NotFound("agent not found", code="agent_not_found")
        conversation, user_message = await _store_user_side(
            state, session, request, agent, user_id, text, idempotency_key
        )
        recent = await conversations.recent_messages(
            session, conversation.id, limit=settings.recent_message_limit, before_seq=user_message.seq
        )
        if settings.memory_recall == "ranked":
            active = await memories.active_memories(session, agent.id)  # ranked below, outside the transaction
        else:
            active = await memories.list_memories(
                session, user_id=user_id, agent_id=agent.id, status=ACTIVE, limit=settings.memory_injection_limit
            )
        state.live_turns.add(user_message.id)
    active = await recall_for_prompt(settings, state.embeddings, user_message.content, active)
    history: list[tuple[str, str]] = [(m.role, m.content) for m in recent]
    turn = TurnContext(
        user_id=user_id,
        agent_id=agent.id,
        conversation_id=conversation.id,
        user_message_id=user_message.id,
        user_text=user_message.content,
        previous_summary=conversation.summary,
        recent=history,
    )
    turn.prompt = build_prompt_messages(
        default_prompt=agent.default_prompt,
        memories=[PromptMemory(m.type, m.importance, m.content) for m in active],
        summary=conversation.summary,
        profile=_profile(agent, request),
        history=history,
        latest_user_text=user_message.content,
    )
    return turn


async def _open_until_first_text(
    state: AppState, prompt: list[dict[str, str]]
) -> tuple[LLMStream, AsyncIterator[str], str]:
    """Open the upstream and wait for its first text. Retries only here, before the client saw anything."""
    attempts = 1 + state.settings.llm_max_retries
    for attempt in range(attempts):
        stream = await state.llm.open_stream(prompt)
        deltas = aiter(stream.deltas())
        try:
            async for first in deltas:
                if first:
                    return stream, deltas, first
            failure = UpstreamError("the language model returned no text", status_code=502, code="upstream_empty")
        except STREAM_ERRORS as exc:
            failure = upstream_error(exc)
        await stream.close()
        log.warning("upstream attempt %d/%d gave no text: %s", attempt + 1, attempts, failure.code)
    raise failure


class TurnRelay:
    """Owns the upstream stream: forwards deltas to the client queue, saves the turn at the end."""

    def __init__(self, state: AppState, turn: TurnContext, stream: LLMStream, deltas: AsyncIterator[str], first: str):
        self._state = state
        self._turn = turn
        self._stream = stream
        self._deltas = deltas
        self._parts = [first]
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._queue.put_nowait(first)

    async def run(self) -> None:
        completed = False
        try:
            async for delta in self._deltas:
                if delta:
                    self._parts.append(delta)
                    self._queue.put_nowait(delta)
                    # A reply that arrives in one burst is all in the socket buffer: let the
                    # response task write each delta instead of parsing the whole burst first.
                    await asyncio.sleep(0)
            completed = self._stream.finish_reason is not None
        except STREAM_ERRORS as exc:
            log.warning("upstream stream broke after %d deltas: %s", len(self._parts), exc)
        try:
            await self._finish(completed)
        finally:
            # The body ends only once the turn is stored: a client that reloads history right
            # after the stream sees its reply (and the memories it produced).
            self._queue.put_nowait(None)

    async def _finish(self, completed: bool) -> None:
        state, turn = self._state, self._turn
        assistant: Message | None = None
        extracted_inline = False
        try:
            await self._stream.close()
            for attempt in range(1, _SAVE_ATTEMPTS + 1):
                try:
                    assistant, extracted_inline = await self._save(completed)
                    break
                except OperationalError:
                    # The reply exists only in memory now: a busy database must not lose it.
                    if attempt == _SAVE_ATTEMPTS:
                        raise
                    log.warning("saving the turn failed (attempt %d), retrying", attempt, exc_info=True)
                    await asyncio.sleep(0.2 * attempt)
        finally:
            if turn.user_message_id is not None:
                state.live_turns.discard(turn.user_message_id)
        settings = state.settings
        if assistant is not None and (
            not extracted_inline or state.embeddings is not None or settings.summary_strategy == "llm"
        ):
            # After the commit, by id, safe to run twice; never on the response path.
            tools = ExtractionTools(llm=state.llm, embeddings=state.embeddings)
            job = run_after_turn(
                state.db,
                settings,
                tools,
                assistant_message_id=assistant.id,
                agent_id=assistant.agent_id,
                conversation_id=assistant.conversation_id,
                extract=not extracted_inline,
            )
            state.background.spawn(job, name=f"after-turn-{assistant.id}")

    async def _save(self, completed: bool) -> tuple[Message | None, bool]:
        state, turn = self._state, self._turn
        async with state.db.write() as session:
            background = state.settings.extraction_in_background
            assistant = await save_assistant_turn(
                session,
                turn,
                "".join(self._parts),
                completed=completed,
                extraction_state=EXTRACTION_PENDING if background else EXTRACTION_DONE,
            )
            if assistant is None or background:
                return assistant, False
            extracted = await extract_inline(session, state.settings, assistant, turn.user_message_id, turn.user_text)
        return assistant, extracted

    async def client_body(self) -> AsyncIterator[bytes]:
        while (delta := await self._queue.get()) is not None:
            yield delta.encode("utf-8")


async def _mark_failed(state: AppState, turn: TurnContext) -> None:
    if turn.user_message_id is None:
        return
    try:
        async with state.db.write() as session:
            await conversations.set_message_fields(
                session, turn.user_message_id, reply_state=REPLY_FAILED, updated_at_ms=now_ms()
            )
    finally:
        state.live_turns.discard(turn.user_message_id)


async def run_chat_turn(state: AppState, user_id: str, request: ChatRequest, idempotency_key: str | None) -> Response:
    wait_s = state.chat_limiter.check(user_id)
    if wait_s:
        raise TooManyRequests("too many chat requests; slow down", headers={"Retry-After": str(wait_s)})
    try:
        turn = await prepare_turn(state, user_id, request, idempotency_key)
    except _Replay as replay:
        return PlainTextResponse(replay.text, headers=STREAM_HEADERS)
    try:
        stream, deltas, first = await _open_until_first_text(state, turn.prompt)
    except BaseException:
        await _mark_failed(state, turn)
        raise
    relay = TurnRelay(state, turn, stream, deltas, first)
    state.background.spawn(relay.run(), name=f"turn-{turn.user_message_id or 'compat'}")
    return StreamingResponse(relay.client_body(), media_type="text/plain; charset=utf-8", headers=STREAM_HEADERS)
