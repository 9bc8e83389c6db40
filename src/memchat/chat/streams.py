"""Live turns, for resume and stop from any instance.

While a reply streams, its turn events are also written to a log that any request can follow from
its first event: `GET /api/{ui/,}chat/{chatId}/stream` answers the same stream, live to its end,
and `POST /api/chat/{chatId}/stop` asks the instance that owns the turn to stop it. Without Redis
the log lives in this process (`LocalTurnStreams`); with `MEMCHAT_REDIS_URL` it is a Redis stream
per turn and the stop is a Redis message (`memchat.chat.shared_streams`), so the follower and the
stopper may be other instances than the owner.

A conversation can have more than one live turn (two tabs sending at once): a follower gets the
latest, a stop stops all of them.
"""

import asyncio
import dataclasses
import json
from collections.abc import Callable
from typing import Any, Protocol

from memchat.chat.events import (
    EventBatches,
    MemoryNote,
    MemorySaved,
    ReasoningDelta,
    TextDelta,
    TurnEvent,
    TurnFailed,
    TurnFinished,
    TurnStarted,
)

StopTurn = Callable[[], None]


class LiveTurn(Protocol):
    """The owner's side of one live turn's log."""

    def publish(self, event: TurnEvent) -> None:
        """Append an event (does not wait)."""
        ...

    async def close(self) -> None:
        """The turn's events are all published: followers end, the turn is no longer live."""
        ...


class TurnStreams(Protocol):
    async def start(self, started: TurnStarted, stop: StopTurn) -> LiveTurn:
        """Make a turn followable; `stop` is called when someone asks to stop it."""
        ...

    async def follow(self, conversation_id: str) -> tuple[TurnStarted, EventBatches] | None:
        """The conversation's latest live turn, from its first event to its last; None when none."""
        ...

    async def stop(self, conversation_id: str) -> bool:
        """Stop the conversation's live turns and wait until their logs end. False when none was live,
        or when one's log did not end within the wait (its owner stalled with its liveness not yet
        run out): the caller then takes the turns in the database."""
        ...

    async def run(self) -> None:
        """Whatever must run for the life of the app (the Redis stop listener)."""
        ...


# --- events as JSON (the Redis log) ---

_KINDS: dict[str, type[Any]] = {
    cls.__name__: cls for cls in (TurnStarted, TextDelta, ReasoningDelta, MemorySaved, TurnFinished, TurnFailed)
}


def event_to_json(event: TurnEvent | TurnStarted) -> dict[str, Any]:
    return {"kind": type(event).__name__, **dataclasses.asdict(event)}


def event_from_json(data: dict[str, Any]) -> TurnEvent | TurnStarted:
    fields = dict(data)
    kind = _KINDS[fields.pop("kind")]
    if kind is MemorySaved:
        return MemorySaved(tuple(MemoryNote(**note) for note in fields["memories"]))
    if kind is TurnFinished and fields.get("error") is not None:
        fields["error"] = TurnFailed(**fields["error"])
    event: TurnEvent | TurnStarted = kind(**fields)
    return event


def encode_batch(events: list[TurnEvent]) -> str:
    return json.dumps([event_to_json(event) for event in events], ensure_ascii=False)


def decode_batch(text: str | bytes) -> list[TurnEvent]:
    decoded = [event_from_json(item) for item in json.loads(text)]
    return [event for event in decoded if not isinstance(event, TurnStarted)]


# --- one process ---


class _LocalLog:
    def __init__(self, started: TurnStarted, stop: StopTurn):
        self.started = started
        self.stop = stop
        self.events: list[TurnEvent] = []
        self.done = asyncio.Event()
        self._changed = asyncio.Event()

    def publish(self, event: TurnEvent) -> None:
        self.events.append(event)
        self._changed.set()

    def end(self) -> None:
        self.done.set()
        self._changed.set()

    async def follow(self) -> EventBatches:
        seen = 0
        while True:
            if seen < len(self.events):
                batch = self.events[seen:]
                seen = len(self.events)
                yield batch
                continue
            if self.done.is_set():
                return
            # each follower clears after waking and looks at the log again before it waits
            await self._changed.wait()
            self._changed.clear()


class _LocalLiveTurn:
    def __init__(self, streams: "LocalTurnStreams", log: _LocalLog):
        self._streams = streams
        self._log = log

    def publish(self, event: TurnEvent) -> None:
        self._log.publish(event)

    async def close(self) -> None:
        self._log.end()
        self._streams.forget(self._log)


class LocalTurnStreams:
    """Live turns of this process only: one process without Redis."""

    def __init__(self) -> None:
        self._live: dict[str, list[_LocalLog]] = {}

    async def start(self, started: TurnStarted, stop: StopTurn) -> LiveTurn:
        log = _LocalLog(started, stop)
        self._live.setdefault(started.conversation_id or "", []).append(log)
        return _LocalLiveTurn(self, log)

    def forget(self, log: _LocalLog) -> None:
        key = log.started.conversation_id or ""
        logs = self._live.get(key, [])
        if log in logs:
            logs.remove(log)
        if not logs:
            self._live.pop(key, None)

    async def follow(self, conversation_id: str) -> tuple[TurnStarted, EventBatches] | None:
        logs = self._live.get(conversation_id)
        if not logs:
            return None
        log = logs[-1]
        return log.started, log.follow()

    async def stop(self, conversation_id: str) -> bool:
        logs = list(self._live.get(conversation_id, []))
        for log in logs:
            log.stop()
        for log in logs:
            await log.done.wait()
        return bool(logs)

    async def run(self) -> None:
        return None
