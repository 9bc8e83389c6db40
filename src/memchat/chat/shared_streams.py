"""Live turns in Redis (MEMCHAT_REDIS_URL): resume and stop reach a turn streamed by any instance.

Keys, all under `memchat:`:
- `turn:{replyId}`: a Redis stream, the turn's log. Its first entry is the TurnStarted (`s`), then
  event batches (`b`, JSON), then `end`. It is kept for a minute after the end, so a follower that
  found the turn just before it ended still reads it whole.
- `live:{conversationId}`: a sorted set of the conversation's live turns (reply ids by start time).
- `alive:{replyId}`: set by the owner while the turn streams, with a TTL of a lease that the owner
  refreshes: a follower of a turn whose owner died ends when it expires.
- channel `stop`: a reply id to stop; every instance listens and the owner stops its relay.

Redis failing never fails a turn: the reply streams and is stored as without Redis; only resume
and stop of that turn are lost (logged). Resume and stop asked while Redis cannot be reached answer
503 `redis_unavailable` with Retry-After (they have nothing to fall back on: the turn may stream on
another instance). The client reconnects on its own: failed commands are retried on a fresh
connection, so connections left over from before a Redis restart cost no error.
"""

import asyncio
import json
import logging
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from memchat.chat.events import EventBatches, TurnEvent, TurnStarted
from memchat.chat.streams import (
    LiveTurn,
    StopTurn,
    decode_batch,
    encode_batch,
    event_from_json,
    event_to_json,
)
from memchat.clock import now_ms
from memchat.errors import ServiceUnavailable

log = logging.getLogger("memchat.streams")

_PREFIX = "memchat:"
_STOP_CHANNEL = _PREFIX + "stop"
_KEEP_ENDED_MS = 60_000
_LIVE_SET_TTL_MS = 86_400_000
_FOLLOW_BLOCK_MS = 1_000
_END = object()

REDIS_UNAVAILABLE = "redis_unavailable"


def connect_redis(url: str) -> Redis:
    """The Redis client of an app: a command that meets a dead connection (Redis restarted, a
    connection reset) is retried once, at once, on a new one (a refused connection fails fast);
    an idle connection is checked before use."""
    return Redis.from_url(
        url,
        socket_connect_timeout=2.0,
        socket_timeout=5.0,  # above _FOLLOW_BLOCK_MS
        health_check_interval=15,
        retry=Retry(ExponentialBackoff(cap=0.1, base=0.01), retries=1),
        retry_on_error=[RedisConnectionError, RedisTimeoutError, OSError],
    )


def _unavailable(what: str) -> ServiceUnavailable:
    return ServiceUnavailable(
        f"Redis cannot be reached, so {what} cannot be done now; try again",
        code=REDIS_UNAVAILABLE,
        headers={"Retry-After": "1"},
    )


def _turn_key(reply_id: str) -> str:
    return f"{_PREFIX}turn:{reply_id}"


def _live_key(conversation_id: str) -> str:
    return f"{_PREFIX}live:{conversation_id}"


def _alive_key(reply_id: str) -> str:
    return f"{_PREFIX}alive:{reply_id}"


class _RedisLiveTurn:
    """Publishes in order from one task, batching what accumulated while Redis answered."""

    def __init__(self, streams: "RedisTurnStreams", started: TurnStarted):
        self._streams = streams
        self._started = started
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._task = asyncio.create_task(self._drain(), name=f"turn-log-{started.reply_id}")

    def publish(self, event: TurnEvent) -> None:
        self._queue.put_nowait(event)

    async def close(self) -> None:
        self._queue.put_nowait(_END)
        try:
            await self._task
        finally:
            self._streams.forget(self._started.reply_id)

    async def _drain(self) -> None:
        redis, reply_id = self._streams.redis, self._started.reply_id
        key, alive_ms = _turn_key(reply_id), self._streams.alive_ms
        ended = False
        while not ended:
            try:
                first = await asyncio.wait_for(self._queue.get(), timeout=alive_ms / 3000)
            except TimeoutError:
                first = None  # nothing to publish: only keep the turn alive
            items = [] if first is None else [first]
            while not self._queue.empty():
                items.append(self._queue.get_nowait())
            ended = _END in items
            events = [item for item in items if item is not _END]
            pipe = redis.pipeline(transaction=False)
            if events:
                pipe.xadd(key, {"b": encode_batch(events)})
            if ended:
                pipe.xadd(key, {"end": "1"})
                pipe.pexpire(key, _KEEP_ENDED_MS)
                pipe.zrem(_live_key(self._started.conversation_id or ""), reply_id)
                pipe.delete(_alive_key(reply_id))
            else:
                pipe.pexpire(_alive_key(reply_id), alive_ms)
            try:
                await pipe.execute()
            except (RedisError, OSError):
                log.warning("publishing turn %s to Redis failed; its resume may miss events", reply_id)


class _NoLiveTurn:
    def publish(self, event: TurnEvent) -> None:
        return None

    async def close(self) -> None:
        return None


class RedisTurnStreams:
    def __init__(self, redis: Redis, *, alive_ms: int, stop_wait_s: float):
        # typed loosely: redis-py's stubs type replies as unions of every shape
        self.redis: Any = redis
        self.alive_ms = alive_ms
        self._stop_wait_s = stop_wait_s
        self._local_stops: dict[str, StopTurn] = {}

    async def start(self, started: TurnStarted, stop: StopTurn) -> LiveTurn:
        reply_id, conversation = started.reply_id, started.conversation_id or ""
        pipe = self.redis.pipeline(transaction=False)
        pipe.xadd(_turn_key(reply_id), {"s": json.dumps(event_to_json(started))})
        pipe.set(_alive_key(reply_id), "1", px=self.alive_ms)
        pipe.zadd(_live_key(conversation), {reply_id: now_ms()})
        pipe.pexpire(_live_key(conversation), _LIVE_SET_TTL_MS)
        try:
            await pipe.execute()
        except (RedisError, OSError):
            log.warning("Redis is unreachable: turn %s streams without resume or stop", reply_id)
            return _NoLiveTurn()
        self._local_stops[reply_id] = stop
        return _RedisLiveTurn(self, started)

    def forget(self, reply_id: str) -> None:
        self._local_stops.pop(reply_id, None)

    async def _live_turns(self, conversation_id: str) -> list[str]:
        """The conversation's live turns, latest first; those whose owner died are dropped."""
        members = await self.redis.zrevrange(_live_key(conversation_id), 0, -1)
        live = []
        for member in members:
            reply_id = member.decode()
            if await self.redis.exists(_alive_key(reply_id)):
                live.append(reply_id)
            else:
                await self.redis.zrem(_live_key(conversation_id), reply_id)
        return live

    async def follow(self, conversation_id: str) -> tuple[TurnStarted, EventBatches] | None:
        try:
            return await self._find(conversation_id)
        except (RedisError, OSError) as exc:
            log.warning("resume: Redis is unreachable: %s", exc)
            raise _unavailable("a resume") from None

    async def _find(self, conversation_id: str) -> tuple[TurnStarted, EventBatches] | None:
        for reply_id in await self._live_turns(conversation_id):
            first = await self.redis.xrange(_turn_key(reply_id), count=1)
            if not first or b"s" not in first[0][1]:
                continue
            entry_id, fields = first[0]
            started = event_from_json(_json(fields[b"s"]))
            assert isinstance(started, TurnStarted)
            return started, self._follow(reply_id, entry_id)
        return None

    async def _follow(self, reply_id: str, after: bytes) -> EventBatches:
        key = _turn_key(reply_id)
        while True:
            answer: Any = await self.redis.xread({key: after}, count=500, block=_FOLLOW_BLOCK_MS)
            if not answer:
                if not await self.redis.exists(_alive_key(reply_id)):
                    return  # the owner died without ending the log
                continue
            for entry_id, fields in answer[0][1]:
                after = entry_id
                if b"end" in fields:
                    return
                if b"b" in fields:  # (the first entry is the TurnStarted)
                    yield decode_batch(fields[b"b"])

    async def stop(self, conversation_id: str) -> bool:
        try:
            live = await self._live_turns(conversation_id)
            for reply_id in live:
                await self.redis.publish(_STOP_CHANNEL, reply_id)
        except (RedisError, OSError) as exc:
            log.warning("stop: Redis is unreachable: %s", exc)
            raise _unavailable("a stop") from None
        ended = True
        for reply_id in live:
            try:
                async with asyncio.timeout(self._stop_wait_s):
                    async for _batch in self._follow(reply_id, b"0"):
                        pass
            except TimeoutError:
                ended = False  # alive by its key, but its owner stores nothing: stalled
        return bool(live) and ended

    async def run(self) -> None:
        """Listen for stops, for the life of the app; reconnects when Redis goes away."""
        while True:
            try:
                pubsub = self.redis.pubsub()
                async with pubsub:
                    await pubsub.subscribe(_STOP_CHANNEL)
                    async for message in pubsub.listen():
                        if message.get("type") != "message":
                            continue
                        stop = self._local_stops.get(message["data"].decode())
                        if stop is not None:
                            stop()
            except (RedisError, OSError):
                log.warning("the Redis stop listener lost its connection; reconnecting")
                await asyncio.sleep(1.0)


def _json(raw: bytes) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(raw)
    return data
