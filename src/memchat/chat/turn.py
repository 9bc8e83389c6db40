"""One POST /api/chat, top to bottom as the turn in docs/behaviour.md reads.

  1. the request becomes a TurnIntent (chat.intent: limits, the user's text);
  2. commit point 1: the user message, before any LLM call, with the history and memories the
     prompt needs (chat.user_message, one transaction); a retry of a stored turn ends here;
  3. recall and the prompt (memories.pipeline, chat.prompt: pure);
  4. the upstream, until its first text (llm.client.open_reply: the one retry policy);
  5. the relay streams the reply as turn events and, when the upstream ends, commit point 2:
     the reply, the summary, the count (chat.relay, chat.save), then memory work (chat.after_turn);
  6. an encoder writes the events in the client's wire format (chat.encoders).

No session is held open across the stream.
"""

from collections.abc import Callable

from starlette.responses import Response

from memchat.auth.repository import get_user
from memchat.chat.context import TurnContext
from memchat.chat.encoders import PLAIN_TEXT, TurnEncoder, replayed
from memchat.chat.events import TurnStarted
from memchat.chat.intent import TurnIntent, read_intent
from memchat.chat.prompt import PromptProfile, build_prompt_messages
from memchat.chat.relay import TurnRelay, end_turn
from memchat.chat.schemas import ChatRequest
from memchat.chat.services import ChatServices
from memchat.chat.user_message import StoredReply, TurnClaim, UserSide, store_user_side
from memchat.clock import now_ms
from memchat.db.engine import AnyRow
from memchat.errors import InvalidInput, TooManyRequests, Unauthorized
from memchat.models.message import REPLY_FAILED
from memchat.schemas import PROFILE_FIELDS
from memchat.security import check_token_current


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
    try:
        intent = read_intent(request, user_id, idempotency_key, services.limits)
        turn = await prepare_turn(services, intent)
        if isinstance(turn, StoredReply):
            return await encoder.stream(*replayed(turn))
    finally:
        if setup_done is not None:
            setup_done()  # the next turn's setup may start while this one waits for the model
    try:
        reply = await services.llm.open_reply(turn.prompt)
    except BaseException:
        await _mark_failed(services, turn)
        raise
    relay = TurnRelay(services, turn, reply)
    started = TurnStarted(turn.reply_id, turn.user_message_id, turn.conversation_id)
    if turn.conversation_id is not None:
        relay.attach(await services.streams.start(started, relay.stop))
    services.background.spawn(relay.run(), name=f"turn-{turn.user_message_id or 'compat'}")
    return await encoder.stream(started, relay.events())


async def prepare_turn(services: ChatServices, intent: TurnIntent) -> TurnContext | StoredReply:
    """Everything up to the LLM call; with an agent, committed in one transaction (commit point 1)."""
    if intent.agent_id is None:
        return await _compat_turn(services, intent)
    now = now_ms()
    claim = TurnClaim(services.instance_id, now + int(services.limits.turn_lease_s * 1000), now)
    side = await services.db.run_write(
        store_user_side, intent, claim, services.limits.recent_message_limit, services.memory.read_for_prompt
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
    if turn.user_message_id is not None:
        await end_turn(services, turn.user_message_id, REPLY_FAILED)
