"""The upstream relay: forwards the reply's deltas as turn events, then stores the turn (commit point 2).

It runs as a task of its own, not in the response generator, so a client that goes away cannot
cancel the save. The events end only once the turn is stored: a client that reloads history right
after the stream sees its reply (and the memories it produced).
"""

import asyncio
import logging
from collections.abc import AsyncIterator

from sqlalchemy.exc import OperationalError

from memchat.chat.after_turn import after_saved, extraction_state_for
from memchat.chat.context import TurnContext
from memchat.chat.events import MemorySaved, TextDelta, TurnEvent, TurnFailed, TurnFinished
from memchat.chat.save import SavedReply, save_assistant_turn
from memchat.chat.services import ChatServices
from memchat.llm.errors import STREAM_ERRORS
from memchat.llm.stream import OpenedReply

log = logging.getLogger("memchat.turn")

_SAVE_ATTEMPTS = 3
_YIELD_EVERY = 16  # deltas read from a burst before the response task gets to write


class TurnRelay:
    def __init__(self, services: ChatServices, turn: TurnContext, reply: OpenedReply):
        self._services = services
        self._turn = turn
        self._reply = reply
        self._parts = [reply.first]
        self._queue: asyncio.Queue[TurnEvent | None] = asyncio.Queue()
        self._queue.put_nowait(TextDelta(reply.first))

    async def run(self) -> None:
        completed = False
        try:
            async for delta in self._reply.deltas:
                if delta:
                    self._parts.append(delta)
                    self._queue.put_nowait(TextDelta(delta))
                    # A reply that arrives in one burst is all in the socket buffer, and reading
                    # it never waits: let the response task write now and then, as one chunk.
                    if len(self._parts) % _YIELD_EVERY == 0:
                        await asyncio.sleep(0)
            completed = self._reply.stream.finish_reason is not None
        except STREAM_ERRORS as exc:
            log.warning("upstream stream broke after %d deltas: %s", len(self._parts), exc)
        try:
            await self._finish(completed)
        finally:
            self._queue.put_nowait(None)

    async def _finish(self, completed: bool) -> None:
        services, turn = self._services, self._turn
        saved: SavedReply | None = None
        state = extraction_state_for(services.memory, turn.user_text)
        try:
            await self._reply.stream.close()
            saved = await self._save(completed, state)
        except Exception:
            self._queue.put_nowait(TurnFailed("save_failed", "the reply could not be stored"))
            raise
        finally:
            if turn.user_message_id is not None:
                services.live_turns.discard(turn.user_message_id)
        if saved is not None:
            memory_ids = await after_saved(services, saved, extraction_state=state)
            if memory_ids:
                self._queue.put_nowait(MemorySaved(tuple(memory_ids)))
        self._queue.put_nowait(TurnFinished(completed, saved.id if saved is not None else None))

    async def _save(self, completed: bool, extraction_state: str) -> SavedReply | None:
        text = "".join(self._parts)
        for attempt in range(1, _SAVE_ATTEMPTS + 1):
            try:
                return await self._services.db.run_write(
                    save_assistant_turn, self._turn, text, completed=completed, extraction_state=extraction_state
                )
            except OperationalError:
                # The reply exists only in memory now: a busy database must not lose it.
                if attempt == _SAVE_ATTEMPTS:
                    raise
                log.warning("saving the turn failed (attempt %d), retrying", attempt, exc_info=True)
                await asyncio.sleep(0.2 * attempt)
        raise AssertionError("unreachable")

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
