"""The upstream relay: reads the reply's deltas and forwards them as turn events.

It streams to the client's queue and to the turn's followers (resume); the reply stops at the
upstream's end, the reply deadline, the size cap or a stop. What happens then (commit point 2, the
work after the turn, the end of the events) is the second half of the turn, in chat.turn.
"""

import asyncio
import logging
import time

from memchat.chat.events import EventBatches, ReasoningDelta, TextDelta, TurnEvent, TurnFailed
from memchat.chat.streams import LiveTurn
from memchat.llm.errors import STREAM_ERRORS
from memchat.llm.stream import OpenedReply, Thinking
from memchat.models.message import COMPLETED, INCOMPLETE, STOPPED
from memchat.observability import metrics

log = logging.getLogger("memchat.turn")

_YIELD_EVERY = 16  # deltas read from a burst before the response task gets to write


class TurnRelay:
    def __init__(self, reply: OpenedReply, max_reply_chars: int, max_reasoning_chars: int = 0):
        self._reply = reply
        self._budget = max_reply_chars
        self._thinking: list[str] = []
        self._thinking_room = max_reasoning_chars
        self._queue: asyncio.Queue[TurnEvent | None] = asyncio.Queue()
        self._waiting_since = 0.0  # when the oldest delta still in the queue was read (perf_counter)
        self._cut = False
        self._first: TurnEvent | None
        if isinstance(reply.first, Thinking):
            self._parts: list[str] = []
            self._chars = 0
            self._first = self._kept_thinking(reply.first)
        else:
            first = reply.first[: self._budget]
            self._cut = len(reply.first) > len(first)
            self._parts = [first]
            self._chars = len(first)
            self._first = TextDelta(first)
        if self._first is not None:
            self._queue.put_nowait(self._first)
        self._live: LiveTurn | None = None
        self._stopped = False
        self._timeout: asyncio.Timeout | None = None
        self._upstream_error: TurnFailed | None = None
        self.failed = False  # the turn ended as failed (its reply not stored)

    def attach(self, live: LiveTurn) -> None:
        """Followers of the turn (resume) get every event from the first text on."""
        self._live = live
        if self._first is not None:
            live.publish(self._first)

    def stop(self) -> None:
        """Stop reading the upstream now; what was streamed is stored as `stopped`."""
        self._stopped = True
        if self._timeout is not None:
            self._timeout.reschedule(asyncio.get_running_loop().time())

    @property
    def text(self) -> str:
        """The reply as read so far."""
        return "".join(self._parts)

    @property
    def reasoning(self) -> str | None:
        """The model's thinking as read so far (up to its cap), when it sent any."""
        return "".join(self._thinking) or None

    @property
    def upstream_error(self) -> TurnFailed | None:
        """How the upstream broke mid-reply, when it did (the reply is then stored incomplete)."""
        return self._upstream_error

    async def close_upstream(self) -> None:
        """End the upstream request (a stopped reply's ends here)."""
        await self._reply.stream.close()

    def emit(self, event: TurnEvent) -> None:
        """An event for the client's stream and the turn's followers."""
        if type(event) is TurnFailed:
            self.failed = True
        self._queue.put_nowait(event)
        if self._live is not None:
            self._live.publish(event)

    async def end(self) -> None:
        """The client's stream and the followers' end (again is harmless)."""
        self._queue.put_nowait(None)
        live, self._live = self._live, None
        if live is not None:
            await live.close()

    async def stream(self) -> str:
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
                    if type(delta) is Thinking:
                        self._think(delta)
                        if len(self._thinking) % _YIELD_EVERY == 0:
                            await asyncio.sleep(0)
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

    def _append(self, delta: str) -> None:
        self._parts.append(delta)
        self._chars += len(delta)
        self._emit_delta(TextDelta(delta))

    def _think(self, delta: str) -> None:
        if (event := self._kept_thinking(delta)) is not None:
            self._emit_delta(event)

    def _emit_delta(self, event: TurnEvent) -> None:
        if self._queue.empty():
            self._waiting_since = time.perf_counter()
        self.emit(event)

    def _kept_thinking(self, delta: str) -> ReasoningDelta | None:
        """Reasoning has its own cap; past it, thinking is dropped and the reply goes on."""
        if self._thinking_room <= 0:
            return None
        piece = str(delta[: self._thinking_room])
        self._thinking_room -= len(piece)
        if self._thinking_room <= 0:
            log.warning("reasoning cut at its cap; the rest of it is dropped")
        self._thinking.append(piece)
        return ReasoningDelta(piece)

    async def events(self) -> EventBatches:
        """The turn's events as they come; events that arrived together in one batch."""
        queue = self._queue
        while (event := await queue.get()) is not None:
            if self._waiting_since and metrics.enabled:
                metrics.STREAM_DELTA_DELAY.observe(time.perf_counter() - self._waiting_since)
            self._waiting_since = 0.0
            batch = [event]
            while not queue.empty():
                more = queue.get_nowait()
                if more is None:
                    yield batch
                    return
                batch.append(more)
            yield batch
