"""One POST /api/chat, top to bottom as the turn in docs/behaviour.md reads.

The first half, in the request (run_chat_turn):
  1. the request becomes a TurnIntent (chat.intent: limits, the user's text);
  2. commit point 1: the user message, before any LLM call, with the history and memories the
     prompt needs (chat.user_message, one transaction); a retry of a stored turn ends here;
  3. recall and the prompt (memories.pipeline, chat.prompt: pure);
  4. the upstream, until its first text (llm.client.open_reply: the one retry policy);
  then an encoder writes the turn's events in the client's wire format (chat.encoders).

The second half, in a task of its own, so that a client that goes away cannot cancel the save
(answer_turn):
  5. the relay streams the reply as turn events, to the upstream's end, a stop, the reply deadline
     or the size cap (chat.relay);
  6. commit point 2: the reply, the summary, the count (chat.save), retried until the save
     deadline; a turn this instance no longer owns stores nothing and never ends as a success;
  7. what runs after the turn: memory extraction inline or in the background, the LLM summary
     (chat.after_turn); the memories it made in time become an event;
  8. the events end: a client that reloads right after its stream sees the stored turn.

No session is held open across the stream.
"""

import logging
from collections.abc import Callable
from contextlib import nullcontext

from sqlalchemy.exc import DBAPIError
from starlette.responses import Response

from memchat.auth.repository import get_user
from memchat.chat.after_turn import after_saved, memory_notes
from memchat.chat.context import TurnContext
from memchat.chat.encoders import PLAIN_TEXT, TurnEncoder, replayed
from memchat.chat.events import MemorySaved, TurnFailed, TurnFinished, TurnStarted
from memchat.chat.intent import TurnIntent, read_intent
from memchat.chat.prompt import PromptProfile, build_prompt_messages
from memchat.chat.relay import TurnRelay
from memchat.chat.save import NOT_STORED, NotStored, SavedReply, TurnLost, store_reply
from memchat.chat.schemas import ChatRequest
from memchat.chat.services import ChatServices
from memchat.chat.user_message import StoredReply, TurnClaim, UserSide, store_user_side
from memchat.clock import now_ms
from memchat.conversations.messages import finish_turn
from memchat.db.engine import AnyRow
from memchat.errors import InvalidInput, TooManyRequests, Unauthorized
from memchat.memories.extraction.pipeline import AfterTurn
from memchat.models.message import REPLY_FAILED
from memchat.observability.turns import TurnWatch
from memchat.schemas import PROFILE_FIELDS
from memchat.security import check_token_current

log = logging.getLogger("memchat.turn")


async def run_chat_turn(
    services: ChatServices,
    user_id: str,
    request: ChatRequest,
    idempotency_key: str | None,
    setup_done: Callable[[], None] | None = None,
    encoder: TurnEncoder = PLAIN_TEXT,
) -> Response:
    wait_s = await services.limiter.check(user_id)
    if wait_s:
        raise TooManyRequests("too many chat requests; slow down", headers={"Retry-After": str(wait_s)})
    watch = TurnWatch(encoder.wire)
    try:
        intent = read_intent(request, user_id, idempotency_key, services.limits)
        turn = await prepare_turn(services, intent, watch)
        if isinstance(turn, StoredReply):
            watch.discard()
            return await encoder.stream(*replayed(turn))
    except BaseException:
        watch.discard()  # refused before the upstream: not a turn
        raise
    finally:
        if setup_done is not None:
            setup_done()  # the next turn's setup may start while this one waits for the model
    try:
        with watch.step("upstream"):
            reply = await services.llm.open_reply(turn.prompt)
    except BaseException:
        watch.ended("failed", streamed=False)
        if turn.user_message_id is not None:
            await end_turn(services, turn.user_message_id, REPLY_FAILED)
        raise
    relay = TurnRelay(reply, services.limits.max_reply_chars, services.limits.max_reasoning_chars)
    started = TurnStarted(turn.reply_id, turn.user_message_id, turn.conversation_id)
    if turn.conversation_id is not None:
        relay.attach(await services.streams.start(started, relay.stop))
    watch.responded()
    with watch.current():
        services.background.spawn(
            answer_turn(services, turn, relay, watch), name=f"turn-{turn.user_message_id or 'compat'}"
        )
    return await encoder.stream(started, relay.events())


async def answer_turn(services: ChatServices, turn: TurnContext, relay: TurnRelay, watch: TurnWatch) -> None:
    """The second half of the turn (steps 5 to 8 above)."""
    outcome = "failed"
    try:
        status = await relay.stream()  # 5
        after = services.memory.after_turn(turn.user_text)
        await relay.close_upstream()  # a stopped reply: the upstream request ends here
        with watch.step("commit_2"):
            saved = await _store(services, turn, relay, status, after)  # 6
        outcome = "failed" if relay.failed else status
        if saved is None:
            return
        with watch.step("extraction"):
            memory_ids = await after_saved(services, saved, after)  # 7
        if memory_ids:
            relay.emit(MemorySaved(await memory_notes(services.db, turn.user_id, memory_ids)))
        relay.emit(TurnFinished(status, saved.id, saved.summary, saved.message_count, relay.upstream_error))
    finally:
        watch.ended(outcome)
        # the turn is in active_turns since commit point 1 (prepare_turn): its lease was renewed
        # while the relay streamed and the turn was stored
        services.active_turns.discard(turn.user_message_id or "")
        await relay.end()  # 8


_TAKEN_OVER = (
    "this reply was not stored: while this instance stalled, its message was answered by another request, "
    "edited, or its reply stopped"
)


async def _store(
    services: ChatServices, turn: TurnContext, relay: TurnRelay, status: str, after: AfterTurn
) -> SavedReply | None:
    """Commit point 2; the stored reply, or None when there is nothing more to do (its events sent)."""
    limits = services.limits

    async def store(within_s: float) -> SavedReply | TurnLost | None | NotStored:
        return await store_reply(
            services.db,
            turn,
            relay.text,
            status=status,
            extraction_state=after.state,
            summary_strategy=services.summary.strategy,
            within_s=within_s,
            reasoning=relay.reasoning,
        )

    try:
        saved = await store(limits.save_deadline_s)
        if saved is NOT_STORED:
            # The client must not take the reply for stored: its stream ends as failed now, and
            # the reply, which exists only here, is still tried in the background meanwhile the
            # user message stays in progress (a retry gets 409).
            relay.emit(TurnFailed(code="save_failed", message="the reply could not be stored"))
            await relay.end()
            saved = await store(limits.save_background_s)
            if saved is NOT_STORED:
                log.error("the reply to message %s could not be stored; it is lost", turn.user_message_id)
                await _mark_failed(services, turn)
                return None
    except Exception:
        relay.emit(TurnFailed(code="save_failed", message="the reply could not be stored"))
        raise
    assert not isinstance(saved, NotStored)  # given up above
    if isinstance(saved, TurnLost):
        # Not stored, so never a success on any wire format: the plain text body breaks off, the
        # UI stream ends with an error and no finish.
        log.warning("the turn of message %s is no longer this instance's: reply dropped", turn.user_message_id)
        relay.emit(TurnFailed(code="turn_taken_over", message=_TAKEN_OVER, http_status=409))
        return None
    if saved is None:  # nothing to store (no agent, or no text)
        relay.emit(TurnFinished(status, None, error=relay.upstream_error))
        return None
    return saved


async def end_turn(services: ChatServices, message_id: str, reply_state: str) -> None:
    """The turn is over without a reply (failed): a retry of its message answers it again. Only
    while this instance still owns it; its lease is no longer renewed."""
    try:
        await services.db.run_write(
            finish_turn, message_id, owner=services.instance_id, reply_state=reply_state, now_ms=now_ms()
        )
    finally:
        services.active_turns.discard(message_id)


async def prepare_turn(
    services: ChatServices, intent: TurnIntent, watch: TurnWatch | None = None
) -> TurnContext | StoredReply:
    """Everything up to the LLM call; with an agent, committed in one transaction (commit point 1)."""
    if intent.agent_id is None:
        return await _compat_turn(services, intent)
    now = now_ms()
    claim = TurnClaim(services.instance_id, now + int(services.limits.turn_lease_s * 1000), now)
    with watch.step("commit_1") if watch is not None else nullcontext():
        side = await services.db.run_write(
            store_user_side,
            intent,
            claim,
            services.limits.recent_message_limit,
            services.memory.read_for_prompt,
            services.image_history_messages if services.images else None,
        )
    if isinstance(side, StoredReply):
        return side
    # From now until the relay has stored the reply (or the turn failed), this instance renews
    # the turn's lease: waiting for a slow model's first text must not look like a dead instance.
    services.active_turns.add(side.message.id)
    try:
        return await _build_turn(services, intent, side)
    except BaseException:
        await end_turn(services, side.message.id, REPLY_FAILED)
        raise


async def _build_turn(services: ChatServices, intent: TurnIntent, side: UserSide) -> TurnContext:
    message = side.message
    memories = await services.memory.recall(message.content, side.memories)
    turn = TurnContext(
        user_id=intent.user_id,
        agent_id=side.agent.id,
        conversation_id=side.conversation_id,
        user_message_id=message.id,
        user_text=message.content,
        recent=side.recent,
        owner=services.instance_id,
    )
    turn.prompt = build_prompt_messages(
        default_prompt=side.agent.default_prompt,
        memories=memories,
        summary=side.summary,
        profile=_profile(side.agent, intent),
        # a history message takes at most this much of the prompt (a huge stored reply would
        # otherwise go upstream on every later turn)
        history=[(role, text[: services.limits.max_history_message_chars]) for role, text in side.recent],
        latest_user_text=message.content,
        empty_profile_fields=services.limits.empty_profile_fields,
        history_pictures=side.recent_pictures,
        latest_pictures=side.pictures,
    )
    return turn


async def _compat_turn(services: ChatServices, intent: TurnIntent) -> TurnContext:
    """No agentId: nothing stored, the client's messages are the history."""
    async with services.db.read() as session:
        user = await get_user(session, intent.user_id)
        if user is None:
            raise Unauthorized("invalid token", code="invalid_token")
    if intent.token_issued_at_ms is not None:  # a login token from before a password change
        check_token_current(intent.token_issued_at_ms, user.tokens_valid_after_ms)
    if intent.kind == "regenerate" and not intent.has_user_message:
        raise InvalidInput("the request has no user message", code="no_user_message")
    turn = TurnContext(intent.user_id, None, None, None, intent.text, recent=[])
    turn.prompt = build_prompt_messages(
        default_prompt=None,
        memories=[],
        summary=None,
        profile=_profile(None, intent),
        history=intent.client_history,
        latest_user_text=None,
        empty_profile_fields=services.limits.empty_profile_fields,
    )
    return turn


def _profile(agent: AnyRow | None, intent: TurnIntent) -> PromptProfile | None:
    override = intent.profile_override or {}
    if agent is None:
        return PromptProfile().overridden(override) if intent.profile_override is not None else None
    stored = PromptProfile(name=agent.name, handle=agent.handle, **{f: getattr(agent, f) for f in PROFILE_FIELDS})
    return stored.overridden(override)


async def _mark_failed(services: ChatServices, turn: TurnContext) -> None:
    """The turn is over without a reply: a retry of its message answers it again. Should the
    database still refuse, the lease watch marks it interrupted."""
    if turn.user_message_id is None:
        return
    try:
        await end_turn(services, turn.user_message_id, REPLY_FAILED)
    except DBAPIError:
        log.warning("marking message %s failed did not work either", turn.user_message_id)
