"""One POST /api/chat, top to bottom as SPEC.md's turn reads.

Commit points: (1) the user message, before any LLM call; (2) the assistant turn, when the
upstream stream ends. No session is held open across the stream. The upstream is consumed by a
task of its own (TurnRelay), so a client that goes away cannot cancel the save.
"""

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from sqlalchemy.engine import Connection
from sqlalchemy.exc import OperationalError
from starlette.responses import PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

from memchat.auth.repository import get_user
from memchat.chat import repository as chat_sql
from memchat.chat.context import TurnContext
from memchat.chat.extraction import ExtractionTools, rule_candidates, run_after_turn, run_extraction
from memchat.chat.prompt import PromptMemory, PromptProfile, build_prompt_messages
from memchat.chat.repository import ActiveMemory, AnyRow
from memchat.chat.save import SavedReply, save_assistant_turn
from memchat.chat.schemas import ChatRequest
from memchat.clock import now_ms
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
from memchat.memories.service import recall_for_prompt
from memchat.models.agent import PROFILE_FIELDS
from memchat.models.base import new_id
from memchat.models.message import COMPLETED, EXTRACTION_DONE, EXTRACTION_PENDING, REPLY_FAILED, REPLY_PENDING
from memchat.state import AppState
from memchat.text import normalize

log = logging.getLogger("memchat.turn")

STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
_SAVE_ATTEMPTS = 3
_YIELD_EVERY = 16  # deltas read from a burst before the response task gets to write


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


def _profile(agent: AnyRow | None, request: ChatRequest) -> PromptProfile | None:
    override = request.conversation.fields_set() if request.conversation is not None else {}
    if agent is None:
        return PromptProfile().overridden(override) if request.conversation is not None else None
    stored = PromptProfile(name=agent.name, handle=agent.handle, **{f: getattr(agent, f) for f in PROFILE_FIELDS})
    return stored.overridden(override)


@dataclass(frozen=True)
class _TurnMessage:
    """The user message a turn answers: inserted now, or a stored one answered again."""

    id: str
    seq: int
    content: str


@dataclass(frozen=True)
class _UserSide:
    """What commit point 1 stored and read."""

    agent: AnyRow
    conversation_id: str
    summary: str | None
    message: _TurnMessage
    recent: list[tuple[str, str]]
    memories: list[ActiveMemory]


def _answer_again(conn: Connection, live_turns: set[str], message: AnyRow) -> _TurnMessage:
    """A retried send of a stored user message: 409 while streaming, the stored reply, or answer again."""
    if message.id in live_turns:
        raise Conflict("this message is still being answered", code="turn_in_progress")
    reply = chat_sql.reply_text(conn, message.id)
    if reply is not None:
        raise _Replay(reply)
    chat_sql.set_reply_state(conn, message.id, REPLY_PENDING, now_ms())
    return _TurnMessage(message.id, message.seq, message.content)


def _regenerate_target(conn: Connection, live_turns: set[str], conversation_id: str) -> _TurnMessage:
    """The last assistant reply is superseded; the turn answers its user message again."""
    last_assistant = chat_sql.last_live_message(conn, conversation_id, "assistant")
    last_user = chat_sql.last_live_message(conn, conversation_id, "user")
    if last_user is None:
        raise InvalidInput("there is nothing to regenerate", code="nothing_to_regenerate")
    if last_user.id in live_turns:
        raise Conflict("the last message is still being answered", code="turn_in_progress")
    if last_assistant is not None and last_assistant.seq > last_user.seq:
        now = now_ms()
        superseded = chat_sql.supersede_from(conn, conversation_id, last_assistant.seq, now)
        chat_sql.bump_conversation(conn, conversation_id, count_delta=-superseded, now_ms=now)
    return _TurnMessage(last_user.id, last_user.seq, last_user.content)


def _insert_user_message(
    conn: Connection, conversation_id: str, agent_id: str, user_id: str, text: str, client_id: str | None, *, once: bool
) -> _TurnMessage | None:
    """The new user message and the conversation's count; with `once`, None if the client id is known."""
    now = now_ms()
    message_id = new_id()
    values = {
        "id": message_id,
        "conversation_id": conversation_id,
        "user_id": user_id,
        "agent_id": agent_id,
        "role": "user",
        "content": text,
        "status": COMPLETED,
        "client_message_id": client_id,
        "reply_to_id": None,
        "reply_state": REPLY_PENDING,
        "extraction_state": None,
        "created_at_ms": now,
        "updated_at_ms": now,
    }
    seq = chat_sql.insert_message_once(conn, values) if once else chat_sql.insert_message(conn, values)
    if seq is None:
        return None
    chat_sql.bump_conversation(conn, conversation_id, count_delta=1, now_ms=now)
    return _TurnMessage(message_id, seq, text)


def _turn_message(
    conn: Connection,
    live_turns: set[str],
    request: ChatRequest,
    conversation_id: str,
    agent_id: str,
    user_id: str,
    text: str | None,
    idempotency_key: str | None,
) -> _TurnMessage:
    """Step 4: the user message this turn answers."""
    if request.trigger == "regenerate-message":
        return _regenerate_target(conn, live_turns, conversation_id)
    assert text is not None
    last_user = request.last_user_message()
    client_id = idempotency_key or (last_user.id if last_user is not None else None)
    if request.message_id:
        # An edited user message: it and everything after it are replaced. The AI SDK keeps the
        # edited message's id, so the same id with the same text again is a retry, not an edit.
        edited = chat_sql.find_by_client_id(conn, conversation_id, request.message_id)
        if edited is None or edited.role != "user":
            raise NotFound("the edited message was not found", code="message_not_found")
        if edited.content == text:
            return _answer_again(conn, live_turns, edited)
        now = now_ms()
        superseded = chat_sql.supersede_from(conn, conversation_id, edited.seq, now)
        chat_sql.bump_conversation(conn, conversation_id, count_delta=-superseded, now_ms=now)
    elif client_id:
        # A retried send: its client id is already a live message of this conversation.
        inserted = _insert_user_message(conn, conversation_id, agent_id, user_id, text, client_id, once=True)
        if inserted is not None:
            return inserted
        existing = chat_sql.find_by_client_id(conn, conversation_id, client_id)
        if existing is not None and existing.role == "user":
            return _answer_again(conn, live_turns, existing)
        client_id = None  # the id is an assistant message's: a new message, without a client id
    message = _insert_user_message(conn, conversation_id, agent_id, user_id, text, client_id, once=False)
    assert message is not None
    return message


def _store_user_side(
    conn: Connection,
    state: AppState,
    request: ChatRequest,
    user_id: str,
    text: str | None,
    idempotency_key: str | None,
) -> _UserSide:
    """Steps 3-6 in one transaction (commit point 1): agent, conversation, user message, history, memories.

    Runs synchronously, on SQLite on the database thread (Database.run_write).
    """
    settings = state.settings
    assert request.agent_id is not None
    found = chat_sql.agent_with_conversation(
        conn, user_id=user_id, agent_id=request.agent_id, conversation_id=request.conversation_id
    )
    if found is None:
        if not chat_sql.user_exists(conn, user_id):
            raise Unauthorized("invalid token", code="invalid_token")  # a deleted user's token: 401, not 404
        raise NotFound("agent not found", code="agent_not_found")
    conversation_id, summary = found.conversation_id, found.conversation_summary
    if conversation_id is None:
        if request.conversation_id is not None:
            raise NotFound("conversation not found", code="conversation_not_found")
        created = chat_sql.create_default_conversation(conn, user_id=user_id, agent_id=found.id, now_ms=now_ms())
        conversation_id, summary = created.id, created.summary
    message = _turn_message(conn, state.live_turns, request, conversation_id, found.id, user_id, text, idempotency_key)
    recent = chat_sql.recent_messages(
        conn, conversation_id, limit=settings.recent_message_limit, before_seq=message.seq
    )
    if settings.memory_recall == "ranked":
        active = chat_sql.active_memories_with_vectors(conn, found.id)  # ranked below, outside the transaction
    else:
        active = chat_sql.memories_for_prompt(conn, found.id, limit=settings.memory_injection_limit)
    return _UserSide(found, conversation_id, summary, message, recent, active)


async def _require_user(state: AppState, user_id: str) -> None:
    async with state.db.read() as session:
        if await get_user(session, user_id) is None:
            raise Unauthorized("invalid token", code="invalid_token")


def _compat_turn(state: AppState, user_id: str, request: ChatRequest, text: str | None) -> TurnContext:
    """No agentId: nothing stored, the client's messages are the history."""
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


async def prepare_turn(state: AppState, user_id: str, request: ChatRequest, idempotency_key: str | None) -> TurnContext:
    """Everything up to the LLM call, committed in one transaction (commit point 1)."""
    text = _validate(state, request)
    if request.agent_id is None:
        await _require_user(state, user_id)
        return _compat_turn(state, user_id, request, text)
    side = await state.db.run_write(_store_user_side, state, request, user_id, text, idempotency_key)
    message = side.message
    # Registered with no await since the commit: on SQLite a retry of this message queued behind
    # it on the writer lock sees it live and gets a 409.
    state.live_turns.add(message.id)
    try:
        active = await recall_for_prompt(state.settings, state.embeddings, message.content, side.memories)
        turn = TurnContext(
            user_id=user_id,
            agent_id=side.agent.id,
            conversation_id=side.conversation_id,
            user_message_id=message.id,
            user_text=message.content,
            previous_summary=side.summary,
            recent=side.recent,
        )
        turn.prompt = build_prompt_messages(
            default_prompt=side.agent.default_prompt,
            memories=[PromptMemory(m.type, m.importance, m.content) for m in active],
            summary=side.summary,
            profile=_profile(side.agent, request),
            history=side.recent,
            latest_user_text=message.content,
        )
    except BaseException:
        state.live_turns.discard(message.id)
        raise
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
                    # A reply that arrives in one burst is all in the socket buffer, and reading
                    # it never waits: let the response task write now and then, as one chunk.
                    if len(self._parts) % _YIELD_EVERY == 0:
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
        saved: SavedReply | None = None
        extracted_inline = False
        try:
            await self._stream.close()
            for attempt in range(1, _SAVE_ATTEMPTS + 1):
                try:
                    saved, extracted_inline = await self._save(completed)
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
        if saved is not None and (
            not extracted_inline or state.embeddings is not None or settings.summary_strategy == "llm"
        ):
            # After the commit, by id, safe to run twice; never on the response path.
            tools = ExtractionTools(llm=state.llm, embeddings=state.embeddings)
            job = run_after_turn(
                state.db,
                settings,
                tools,
                assistant_message_id=saved.id,
                agent_id=saved.agent_id,
                conversation_id=saved.conversation_id,
                extract=not extracted_inline,
            )
            state.background.spawn(job, name=f"after-turn-{saved.id}")

    async def _save(self, completed: bool) -> tuple[SavedReply | None, bool]:
        """Commit point 2, then (rules, not in the background) memory extraction before the body ends.

        A turn whose text makes no rule candidate is stored as extracted. Otherwise the reply is
        stored pending and the rules run at once in their own short transaction, so that a client
        reloading right after the stream sees the memory; if they fail, the background job retries.
        """
        state, turn = self._state, self._turn
        background = state.settings.extraction_in_background
        extract_now = not background and bool(rule_candidates(turn.user_text))
        saved = await state.db.run_write(
            save_assistant_turn,
            turn,
            "".join(self._parts),
            completed=completed,
            extraction_state=EXTRACTION_PENDING if background or extract_now else EXTRACTION_DONE,
        )
        if saved is None or background:
            return saved, False
        if not extract_now:
            return saved, True
        try:
            await run_extraction(state.db, state.settings, saved.id)
        except Exception:
            log.exception("memory extraction failed for message %s; left pending", saved.id)
            return saved, False
        return saved, True

    async def client_body(self) -> AsyncIterator[bytes]:
        """Each delta as soon as it is here; deltas that arrived together go out in one write."""
        queue = self._queue
        while (delta := await queue.get()) is not None:
            if queue.empty():
                yield delta.encode("utf-8")
                continue
            parts = [delta]
            while not queue.empty() and (more := queue.get_nowait()) is not None:
                parts.append(more)
            yield "".join(parts).encode("utf-8")
            if more is None:
                return


class RelayResponse(Response):
    """The reply as plain text, chunk by chunk from the relay.

    Unlike StreamingResponse it runs no task group and no disconnect listener per response: the
    relay owns the upstream and the save, so a client that goes away only ends these writes.
    """

    media_type = "text/plain; charset=utf-8"

    def __init__(self, chunks: AsyncIterator[bytes]):
        self.chunks = chunks
        self.status_code = 200
        self.background = None
        self.init_headers(STREAM_HEADERS)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
            async for chunk in self.chunks:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            pass  # the client is gone (ASGI 2.4 servers raise here); the relay still saves the turn


async def _mark_failed(state: AppState, turn: TurnContext) -> None:
    if turn.user_message_id is None:
        return
    try:
        await state.db.run_write(chat_sql.set_reply_state, turn.user_message_id, REPLY_FAILED, now_ms())
    finally:
        state.live_turns.discard(turn.user_message_id)


async def run_chat_turn(
    state: AppState,
    user_id: str,
    request: ChatRequest,
    idempotency_key: str | None,
    setup_done: Callable[[], None] | None = None,
) -> Response:
    wait_s = state.chat_limiter.check(user_id)
    if wait_s:
        raise TooManyRequests("too many chat requests; slow down", headers={"Retry-After": str(wait_s)})
    try:
        turn = await prepare_turn(state, user_id, request, idempotency_key)
    except _Replay as replay:
        return PlainTextResponse(replay.text, headers=STREAM_HEADERS)
    finally:
        if setup_done is not None:
            setup_done()  # the next turn's setup may start while this one waits for the model
    try:
        stream, deltas, first = await _open_until_first_text(state, turn.prompt)
    except BaseException:
        await _mark_failed(state, turn)
        raise
    relay = TurnRelay(state, turn, stream, deltas, first)
    state.background.spawn(relay.run(), name=f"turn-{turn.user_message_id or 'compat'}")
    return RelayResponse(relay.client_body())
