"""The upstream relay: forwards the reply's deltas as turn events, then stores the turn (commit point 2).

It runs as a task of its own, not in the response generator, so a client that goes away cannot
cancel the save. The events end only once the turn is stored: a client that reloads history right
after the stream sees its reply (and the memories it produced). A reply stops at the reply
deadline or the size cap and is stored incomplete. When the database cannot store it within the
save deadline, the client's stream ends as failed and the relay keeps trying in the background:
the user message stays in progress (a retry gets 409) until the reply is stored or given up.
"""

import asyncio
import logging

from sqlalchemy.exc import DBAPIError

from memchat.chat.after_turn import after_saved
from memchat.chat.context import TurnContext
from memchat.chat.events import (
    EventBatches,
    MemoryNote,
    MemorySaved,
    TextDelta,
    TurnEvent,
    TurnFailed,
    TurnFinished,
)
from memchat.chat.save import SavedReply, TurnLost, save_assistant_turn
from memchat.chat.services import ChatServices
from memchat.chat.streams import LiveTurn
from memchat.clock import now_ms
from memchat.conversations.messages import finish_turn
from memchat.llm.errors import STREAM_ERRORS
from memchat.llm.stream import OpenedReply
from memchat.memories.repository import get_memory
from memchat.models.memory import ACTIVE
from memchat.models.message import COMPLETED, INCOMPLETE, REPLY_FAILED, STOPPED

log = logging.getLogger("memchat.turn")

_YIELD_EVERY = 16  # deltas read from a burst before the response task gets to write
_MAX_SAVE_BACKOFF_S = 2.0


_TAKEN_OVER = (
    "this reply was not stored: while this instance stalled, its message was answered by another request, "
    "edited, or its reply stopped"
)


class _NotStored:
    """The save did not succeed before its deadline (a stored turn may also be None: nothing to store)."""


NOT_STORED = _NotStored()


async def end_turn(services: ChatServices, message_id: str, reply_state: str) -> None:
    """The turn is over without a reply (failed): a retry of its message answers it again. Only
    while this instance still owns it; its lease is no longer renewed."""
    try:
        await services.db.run_write(
            finish_turn, message_id, owner=services.instance_id, reply_state=reply_state, now_ms=now_ms()
        )
    finally:
        services.active_turns.discard(message_id)


class TurnRelay:
    def __init__(self, services: ChatServices, turn: TurnContext, reply: OpenedReply):
        self._services = services
        self._turn = turn
        self._reply = reply
        self._budget = services.limits.max_reply_chars
        first = reply.first[: self._budget]
        self._cut = len(reply.first) > len(first)
        self._parts = [first]
        self._chars = len(first)
        self._queue: asyncio.Queue[TurnEvent | None] = asyncio.Queue()
        self._queue.put_nowait(TextDelta(first))
        self._live: LiveTurn | None = None
        self._stopped = False
        self._timeout: asyncio.Timeout | None = None
        self._upstream_error: TurnFailed | None = None

    def attach(self, live: LiveTurn) -> None:
        """Followers of the turn (resume) get every event from the first text on."""
        self._live = live
        if self._parts[0]:
            live.publish(TextDelta(self._parts[0]))

    def stop(self) -> None:
        """Stop reading the upstream now; what was streamed is stored as `stopped`."""
        self._stopped = True
        if self._timeout is not None:
            self._timeout.reschedule(asyncio.get_running_loop().time())

    async def run(self) -> None:
        try:
            status = await self._relay()
            await self._finish(status)
        finally:
            # the turn is in active_turns since commit point 1 (chat.turn.prepare_turn): its lease
            # was renewed while this relay streamed and stored it
            self._services.active_turns.discard(self._turn.user_message_id or "")
            self._queue.put_nowait(None)
            await self._end_live()

    async def _relay(self) -> str:
        """Read the upstream to its end, the reply deadline, the size cap or a stop; the reply's status."""
        if self._cut:
            log.warning("reply cut at %d characters", self._budget)
            return INCOMPLETE
        try:
            async with asyncio.timeout_at(self._reply.deadline) as self._timeout:
                if self._stopped:
                    self._timeout.reschedule(asyncio.get_running_loop().time())
                async for delta in self._reply.deltas:
                    if not delta:
                        continue
                    room = self._budget - self._chars
                    if len(delta) > room:
                        if room > 0:
                            self._append(delta[:room])
                        log.warning("reply cut at %d characters", self._budget)
                        return INCOMPLETE
                    self._append(delta)
                    # A reply that arrives in one burst is all in the socket buffer, and reading
                    # it never waits: let the response task write now and then, as one chunk.
                    if len(self._parts) % _YIELD_EVERY == 0:
                        await asyncio.sleep(0)
        except TimeoutError:
            if self._stopped:
                log.info("reply stopped by the user after %d deltas", len(self._parts))
                return STOPPED
            log.warning("reply stopped at its deadline after %d deltas", len(self._parts))
            return INCOMPLETE
        except STREAM_ERRORS as exc:
            log.warning("upstream stream broke after %d deltas: %s", len(self._parts), exc)
            self._upstream_error = TurnFailed(
                code="upstream_interrupted", message="the upstream LLM failed mid-reply; the reply is stored incomplete"
            )
            return INCOMPLETE
        finally:
            self._timeout = None
        return COMPLETED if self._reply.stream.finish_reason is not None else INCOMPLETE

    def _emit(self, event: TurnEvent) -> None:
        self._queue.put_nowait(event)
        if self._live is not None:
            self._live.publish(event)

    async def _end_live(self) -> None:
        live, self._live = self._live, None
        if live is not None:
            await live.close()

    def _append(self, delta: str) -> None:
        self._parts.append(delta)
        self._chars += len(delta)
        self._emit(TextDelta(delta))

    async def _finish(self, status: str) -> None:
        services, turn = self._services, self._turn
        limits = services.limits
        after = services.memory.after_turn(turn.user_text)
        state = after.state
        await self._reply.stream.close()  # a stopped reply: the upstream request ends here
        try:
            saved = await self._save(status, state, limits.save_deadline_s)
            if saved is NOT_STORED:
                # The client must not take the reply for stored: its stream ends as failed now,
                # and the reply, which exists only here, is still tried in the background.
                self._emit(TurnFailed(code="save_failed", message="the reply could not be stored"))
                self._queue.put_nowait(None)
                await self._end_live()
                saved = await self._save(status, state, limits.save_background_s)
                if saved is NOT_STORED:
                    log.error("the reply to message %s could not be stored; it is lost", turn.user_message_id)
                    await self._mark_failed()
                    return
        except Exception:
            self._emit(TurnFailed(code="save_failed", message="the reply could not be stored"))
            raise
        assert not isinstance(saved, _NotStored)
        if isinstance(saved, TurnLost):
            # Not stored, so never a success on any wire format: the plain text body breaks off,
            # the UI stream ends with an error and no finish.
            log.warning("the turn of message %s is no longer this instance's: reply dropped", turn.user_message_id)
            self._emit(TurnFailed(code="turn_taken_over", message=_TAKEN_OVER, http_status=409))
            return
        if saved is None:
            self._emit(TurnFinished(status, None, error=self._upstream_error))
            return
        memory_ids = await after_saved(services, saved, after)
        if memory_ids:
            self._emit(MemorySaved(await self._memory_notes(memory_ids)))
        self._emit(TurnFinished(status, saved.id, saved.summary, saved.message_count, self._upstream_error))

    async def _memory_notes(self, memory_ids: list[str]) -> tuple[MemoryNote, ...]:
        async with self._services.db.read() as session:
            rows = [await get_memory(session, self._turn.user_id, memory_id) for memory_id in memory_ids]
        return tuple(
            MemoryNote(row.id, row.type, row.content, row.importance, "added")
            for row in rows
            if row is not None and row.status == ACTIVE  # a memory a change of mind archived is no news
        )

    async def _mark_failed(self) -> None:
        """The turn is over without a reply: a retry of its message answers it again. Should the
        database still refuse, start-up recovery marks it interrupted."""
        if self._turn.user_message_id is None:
            return
        try:
            await end_turn(self._services, self._turn.user_message_id, REPLY_FAILED)
        except DBAPIError:
            log.warning("marking message %s failed did not work either", self._turn.user_message_id)

    async def _save(
        self, status: str, extraction_state: str, within_s: float
    ) -> SavedReply | TurnLost | None | _NotStored:
        """Commit point 2, retried while the database is busy or unreachable, for at most `within_s`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within_s
        text = "".join(self._parts)
        attempt = 0
        while True:
            attempt += 1
            try:
                return await self._services.db.run_write(
                    save_assistant_turn,
                    self._turn,
                    text,
                    status=status,
                    extraction_state=extraction_state,
                    summary_strategy=self._services.summary.strategy,
                )
            except DBAPIError:
                # The reply exists only in memory now: a busy database must not lose it.
                delay = min(0.2 * attempt, _MAX_SAVE_BACKOFF_S)
                if loop.time() + delay > deadline:
                    log.warning("saving the turn failed %d times", attempt, exc_info=True)
                    return NOT_STORED
                log.warning("saving the turn failed (attempt %d), retrying", attempt)
                await asyncio.sleep(delay)

    async def events(self) -> EventBatches:
        """The turn's events as they come; events that arrived together in one batch."""
        queue = self._queue
        while (event := await queue.get()) is not None:
            batch = [event]
            while not queue.empty():
                more = queue.get_nowait()
                if more is None:
                    yield batch
                    return
                batch.append(more)
            yield batch
