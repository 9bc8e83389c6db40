"""Commit point 1: the user message a turn answers, stored before any LLM call, with what the prompt reads.

One synchronous transaction (Database.run_write). The message is new, a retry of a stored one,
an edit that replaces a stored one and what followed, or the last one again for a regenerate.
A retry whose reply is already stored returns that reply (StoredReply) and starts nothing.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy.engine import Connection

from memchat.auth.repository import user_exists, user_token_cutoff
from memchat.chat.intent import TurnIntent
from memchat.chat.prompt import NO_PICTURES, Pictures
from memchat.clock import now_ms
from memchat.conversations import messages, turn_writes
from memchat.conversations import repository as conversations
from memchat.conversations.forget import forget_statements, is_digest
from memchat.db.engine import AnyRow
from memchat.errors import Conflict, InvalidInput, NotFound, Unauthorized
from memchat.files import repository as files
from memchat.files.pictures import data_url
from memchat.memories import repository as memory_store
from memchat.memories.types import StoredMemory
from memchat.models.message import REPLY_PENDING
from memchat.security import check_token_current


@dataclass(frozen=True)
class TurnMessage:
    """The user message a turn answers: inserted now, or a stored one answered again."""

    id: str
    seq: int
    content: str
    picture_count: int = 0


@dataclass(frozen=True)
class StoredReply:
    """A retried send whose reply is already stored: answer with it, start nothing."""

    text: str
    reply_id: str
    user_message_id: str
    conversation_id: str
    status: str
    reasoning: str | None = None


@dataclass(frozen=True)
class UserSide:
    """What commit point 1 stored and read."""

    agent: AnyRow
    conversation_id: str
    summary: str | None
    message: TurnMessage
    recent: list[tuple[str, str]]
    memories: list[StoredMemory]
    # the pictures of each recent message, and of the message answered (see read_pictures)
    recent_pictures: list[Pictures] = field(default_factory=list)
    pictures: Pictures = NO_PICTURES


ReadMemories = Callable[[Connection, str], list[StoredMemory]]


@dataclass(frozen=True)
class TurnClaim:
    """Who answers the turn (this instance) and until when its lease holds, unless renewed."""

    owner: str
    until_ms: int
    now_ms: int


def store_user_side(
    conn: Connection,
    intent: TurnIntent,
    claim: TurnClaim,
    recent_limit: int,
    read_memories: ReadMemories,
    picture_history: int | None = None,
) -> UserSide | StoredReply:
    """Steps 3-6 in one transaction: agent, conversation, user message (and its pictures), history,
    memories. `picture_history`: see read_pictures."""
    assert intent.agent_id is not None
    found, branch_locked = conversations.agent_with_conversation(
        conn, user_id=intent.user_id, agent_id=intent.agent_id, conversation_id=intent.conversation_id
    )
    if found is None:
        if intent.token_issued_at_ms is not None:
            _check_login_token(conn, intent.user_id, intent.token_issued_at_ms)
        if not user_exists(conn, intent.user_id):
            raise Unauthorized("invalid token", code="invalid_token")  # a deleted user's token: 401, not 404
        raise NotFound("agent not found", code="agent_not_found")
    if intent.token_issued_at_ms is not None:  # a login token from before a password change: 401
        check_token_current(intent.token_issued_at_ms, found.tokens_valid_after_ms)
    conversation_id, summary = found.conversation_id, found.conversation_summary
    if conversation_id is None:
        if intent.conversation_id is not None:
            raise NotFound("conversation not found", code="conversation_not_found")
        created = conversations.create_default_conversation(
            conn, user_id=intent.user_id, agent_id=found.id, now_ms=now_ms()
        )
        conversation_id, summary = created.id, created.summary
    elif not branch_locked:  # PostgreSQL: the conversation was created after the locking read found none
        summary = conversations.lock_branch(conn, conversation_id)
    message = _turn_message(conn, claim, intent, conversation_id, found.id)
    if isinstance(message, StoredReply):
        return message
    if intent.kind == "regenerate" or intent.edited_id is not None:
        summary = conversations.summary_for_update(conn, conversation_id)  # as `_replace_from` left it
    recent = messages.recent_messages(conn, conversation_id, limit=recent_limit, before_seq=message.seq)
    recent_pictures, pictures = read_pictures(conn, recent, message, picture_history)
    return UserSide(
        found,
        conversation_id,
        summary,
        message,
        [(row.role, row.content) for row in recent],
        read_memories(conn, found.id),
        recent_pictures,
        pictures,
    )


def read_pictures(
    conn: Connection, recent: list[AnyRow], message: TurnMessage, picture_history: int | None
) -> tuple[list[Pictures], Pictures]:
    """What the prompt says of the pictures: with `picture_history` None (the model reads none) only
    how many each message had; else the answered message's pictures and those of the last
    `picture_history` earlier messages that had any, as data URLs (read only when there are any)."""
    counts = {row.id: row.picture_count for row in recent if row.picture_count}
    if message.picture_count:
        counts[message.id] = message.picture_count
    sent: list[str] = []
    if picture_history is not None and counts:
        earlier = [row.id for row in recent if row.id in counts]
        sent = [message.id, *(earlier[-picture_history:] if picture_history else [])]
    data = files.pictures_of(conn, [i for i in sent if i in counts])

    def pictures(i: str) -> Pictures:
        urls = tuple(data_url(p.media_type, p.data) for p in data.get(i, []))
        return Pictures(counts.get(i, 0), urls)

    return [pictures(row.id) for row in recent], pictures(message.id)


def _check_login_token(conn: Connection, user_id: str, issued_at_ms: int) -> None:
    """The user exists and the token is from after their last password change (one primary-key read)."""
    cutoff = user_token_cutoff(conn, user_id)
    if cutoff is None:
        raise Unauthorized("invalid token", code="invalid_token")  # a deleted user's token: 401, not 404
    check_token_current(issued_at_ms, cutoff[0])


def _turn_message(
    conn: Connection, claim: TurnClaim, intent: TurnIntent, conversation_id: str, agent_id: str
) -> TurnMessage | StoredReply:
    """Step 4: the user message this turn answers."""
    if intent.kind == "regenerate":
        return _regenerate_target(conn, claim, conversation_id, agent_id)
    assert intent.text is not None
    client_id = intent.client_id
    if intent.edited_id is not None:
        # An edited user message: it and everything after it are replaced. The AI SDK keeps the
        # edited message's id, so the same id with the same text again is a retry, not an edit.
        edited = messages.find_by_client_id(conn, conversation_id, intent.edited_id)
        if edited is None or edited.role != "user":
            raise NotFound("the edited message was not found", code="message_not_found")
        if edited.content == intent.text:
            return _answer_again(conn, claim, edited)
        if messages.live_turn_in_conversation(conn, conversation_id, claim.now_ms):
            # The reply being streamed answers a message this edit replaces: it would land as an
            # orphan after the edit. Edit once it is stored (or stopped).
            raise Conflict("a reply in this conversation is still being written", code="turn_in_progress")
        _replace_from(conn, conversation_id, agent_id, edited.seq)
    elif client_id:
        # A retried send: its client id is already a live message of this conversation.
        inserted = _insert(conn, intent, claim, conversation_id, agent_id, client_id, once=True)
        if inserted is not None:
            return inserted
        existing = messages.find_by_client_id(conn, conversation_id, client_id)
        if existing is not None and existing.role == "user":
            if existing.content != intent.text:
                # Like a payment API's idempotency key: the same key with another body is a
                # mistake, never a replay of the first answer.
                raise InvalidInput(
                    "this message id (or Idempotency-Key) was already used for a different message; "
                    "send a new message with a new id",
                    code="message_id_reused",
                )
            return _answer_again(conn, claim, existing)
        client_id = None  # the id is an assistant message's: a new message, without a client id
    message = _insert(conn, intent, claim, conversation_id, agent_id, client_id, once=False)
    assert message is not None
    return message


def _answer_again(conn: Connection, claim: TurnClaim, message: AnyRow) -> TurnMessage | StoredReply:
    """A retried send of a stored user message: 409 while any instance answers it, the stored reply,
    or this instance answers it again (the claim decides between two that try at once)."""
    if messages.turn_is_live(message, claim.now_ms):
        raise Conflict("this message is still being answered", code="turn_in_progress")
    reply = messages.current_reply(conn, message.id)
    if reply is not None:
        return StoredReply(reply.content, reply.id, message.id, reply.conversation_id, reply.status, reply.reasoning)
    _claim(conn, claim, message.id, "this message is still being answered")
    return TurnMessage(message.id, message.seq, message.content, message.picture_count)


def _claim(conn: Connection, claim: TurnClaim, message_id: str, busy: str) -> None:
    if not messages.claim_turn(conn, message_id, owner=claim.owner, until_ms=claim.until_ms, now_ms=claim.now_ms):
        raise Conflict(busy, code="turn_in_progress")


def _regenerate_target(conn: Connection, claim: TurnClaim, conversation_id: str, agent_id: str) -> TurnMessage:
    """The last assistant reply is superseded; the turn answers its user message again."""
    last_assistant = messages.last_live_message(conn, conversation_id, "assistant")
    last_user = messages.last_live_message(conn, conversation_id, "user")
    if last_user is None:
        raise InvalidInput("there is nothing to regenerate", code="nothing_to_regenerate")
    _claim(conn, claim, last_user.id, "the last message is still being answered")
    if last_assistant is not None and last_assistant.seq > last_user.seq:
        _replace_from(conn, conversation_id, agent_id, last_assistant.seq)
    return TurnMessage(last_user.id, last_user.seq, last_user.content, last_user.picture_count)


def _replace_from(conn: Connection, conversation_id: str, agent_id: str, from_seq: int) -> None:
    """Supersede the live messages from `from_seq` (an edit, a regenerate); they leave the summary
    too: it is put back as it stood before the first replaced reply was rolled in, or, for replies
    stored before summaries were kept, a digest forgets their words."""
    kept, before, saved_at_ms = conversations.summary_before_turns_from(conn, conversation_id, from_seq)
    if not kept:
        current = conversations.summary_for_update(conn, conversation_id)
        before = forget_statements(current, conversations.live_texts_from(conn, conversation_id, from_seq))
        kept = before != current
    elif saved_at_ms is not None and is_digest(before):
        before = _without_memories_that_left(conn, agent_id, before, saved_at_ms)
    messages.supersede_from(conn, conversation_id, from_seq, now_ms())
    if kept:
        conversations.set_summary(conn, conversation_id, before)


# A memory change stamps its event before it locks the conversations to forget its words; a reply
# stored meanwhile (or by an instance whose clock runs ahead) kept the summary with them.
_LEFT_BEFORE_SAVE_MS = 60_000


def _without_memories_that_left(conn: Connection, agent_id: str, summary: str | None, saved_at_ms: int) -> str | None:
    """A digest kept at `saved_at_ms` without the words of the agent's memories that left since
    (superseded, archived, rewritten): their forget reached the stored summary, not this copy. What
    the active memories say stays. (A deleted memory's words left the kept copies with it.)"""
    left = memory_store.left_since(conn, agent_id, saved_at_ms - _LEFT_BEFORE_SAVE_MS)
    if not left:
        return summary
    return forget_statements(summary, left, memory_store.active_contents(conn, agent_id))


def _insert(
    conn: Connection,
    intent: TurnIntent,
    claim: TurnClaim,
    conversation_id: str,
    agent_id: str,
    client_id: str | None,
    *,
    once: bool,
) -> TurnMessage | None:
    """The new user message and the conversation's count; with `once`, None if the client id is known."""
    assert intent.text is not None
    now = claim.now_ms
    values = messages.message_values(
        conversation_id=conversation_id,
        user_id=intent.user_id,
        agent_id=agent_id,
        role="user",
        content=intent.text,
        now_ms=now,
        client_message_id=client_id,
        reply_state=REPLY_PENDING,
        turn_owner=claim.owner,
        turn_lease_until_ms=claim.until_ms,
        picture_count=len(intent.pictures),
    )
    seq = turn_writes.insert_counted(conn, values, once=once)
    if seq is None:
        return None
    stored = files.store_pictures(
        conn, message_id=values["id"], user_id=intent.user_id, pictures=intent.pictures, now_ms=now
    )
    if not stored:  # raised inside the transaction: the message and its count go too
        raise InvalidInput("a picture sent again is not one of this user's", code="file_not_found")
    return TurnMessage(values["id"], seq, intent.text, len(intent.pictures))
