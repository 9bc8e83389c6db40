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
from collections.abc import AsyncIterator

from sqlalchemy.exc import DBAPIError

from memchat.chat.after_turn import after_saved, extraction_state_for
from memchat.chat.context import TurnContext
from memchat.chat.events import MemorySaved, TextDelta, TurnEvent, TurnFailed, TurnFinished
from memchat.chat.save import SavedReply, save_assistant_turn
from memchat.chat.services import ChatServices
from memchat.clock import now_ms
from memchat.conversations.messages import finish_turn
from memchat.llm.errors import STREAM_ERRORS
from memchat.llm.stream import OpenedReply
from memchat.models.message import REPLY_FAILED

log = logging.getLogger("memchat.turn")

_YIELD_EVERY = 16  # deltas read from a burst before the response task gets to write
_MAX_SAVE_BACKOFF_S = 2.0


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

    async def run(self) -> None:
        try:
            completed = await self._relay()
            await self._finish(completed)
        finally:
            # the turn is in active_turns since commit point 1 (chat.turn.prepare_turn): its lease
            # was renewed while this relay streamed and stored it
            self._services.active_turns.discard(self._turn.user_message_id or "")
            self._queue.put_nowait(None)

    async def _relay(self) -> bool:
        """Read the upstream to its end, the reply deadline or the size cap; True when it ended properly."""
        if self._cut:
            log.warning("reply cut at %d characters", self._budget)
            return False
        try:
            async with asyncio.timeout_at(self._reply.deadline):
                async for delta in self._reply.deltas:
                    if not delta:
                        continue
                    room = self._budget - self._chars
                    if len(delta) > room:
                        if room > 0:
                            self._append(delta[:room])
                        log.warning("reply cut at %d characters", self._budget)
                        return False
                    self._append(delta)
                    # A reply that arrives in one burst is all in the socket buffer, and reading
                    # it never waits: let the response task write now and then, as one chunk.
                    if len(self._parts) % _YIELD_EVERY == 0:
                        await asyncio.sleep(0)
        except TimeoutError:
            log.warning("reply stopped at its deadline after %d deltas", len(self._parts))
            return False
        except STREAM_ERRORS as exc:
            log.warning("upstream stream broke after %d deltas: %s", len(self._parts), exc)
            return False
        return self._reply.stream.finish_reason is not None

    def _append(self, delta: str) -> None:
        self._parts.append(delta)
        self._chars += len(delta)
        self._queue.put_nowait(TextDelta(delta))

    async def _finish(self, completed: bool) -> None:
        services, turn = self._services, self._turn
        limits = services.limits
        state = extraction_state_for(services.memory, turn.user_text)
        await self._reply.stream.close()
        try:
            saved = await self._save(completed, state, limits.save_deadline_s)
            if saved is NOT_STORED:
                # The client must not take the reply for stored: its stream ends as failed now,
                # and the reply, which exists only here, is still tried in the background.
                self._queue.put_nowait(TurnFailed("save_failed", "the reply could not be stored"))
                self._queue.put_nowait(None)
                saved = await self._save(completed, state, limits.save_background_s)
                if saved is NOT_STORED:
                    log.error("the reply to message %s could not be stored; it is lost", turn.user_message_id)
                    await self._mark_failed()
                    return
        except Exception:
            self._queue.put_nowait(TurnFailed("save_failed", "the reply could not be stored"))
            raise
        assert not isinstance(saved, _NotStored)
        if saved is not None:
            memory_ids = await after_saved(services, saved, extraction_state=state)
            if memory_ids:
                self._queue.put_nowait(MemorySaved(tuple(memory_ids)))
        self._queue.put_nowait(TurnFinished(completed, saved.id if saved is not None else None))

    async def _mark_failed(self) -> None:
        """The turn is over without a reply: a retry of its message answers it again. Should the
        database still refuse, start-up recovery marks it interrupted."""
        if self._turn.user_message_id is None:
            return
        try:
            await end_turn(self._services, self._turn.user_message_id, REPLY_FAILED)
        except DBAPIError:
            log.warning("marking message %s failed did not work either", self._turn.user_message_id)

    async def _save(self, completed: bool, extraction_state: str, within_s: float) -> SavedReply | None | _NotStored:
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
                    completed=completed,
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

    async def events(self) -> AsyncIterator[list[TurnEvent]]:
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
