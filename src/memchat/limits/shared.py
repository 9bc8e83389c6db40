"""The chat rate limit and the login throttle in Redis, shared by every instance (MEMCHAT_REDIS_URL).

Each check is one Lua script, atomic on the Redis server and timed by its clock, so instances with
skewed clocks or requests that arrive together count as one sliding window.

While Redis cannot be reached both fall back to this process's own counters (memchat.limits.throttle):
every instance then limits on its own, so a user may get up to one limit per instance, and nobody
gets a 500. The next check that reaches Redis counts there again.
"""

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from redis.asyncio import Redis
from redis.exceptions import RedisError

from memchat.limits.throttle import (
    LOGIN_BASE_LOCK_S,
    LOGIN_FREE_ATTEMPTS,
    LOGIN_MAX_LOCK_S,
    LOGIN_WINDOW_S,
    ChatLimiter,
    LoginGuard,
    LoginThrottle,
    RateLimiter,
)

log = logging.getLogger("memchat.limits")

T = TypeVar("T")

_PREFIX = "memchat:"

# KEYS[1]: the key's hits (a sorted set of hit times); ARGV: limit, window in ms, a unique member
_RATE = """
local now_s, now_us = unpack(redis.call('TIME'))
local now = now_s * 1000 + math.floor(now_us / 1000)
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  local oldest = tonumber(redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2])
  return math.max(1, math.ceil((oldest + window - now) / 1000))
end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], window)
return 0
"""

# KEYS[1]: a hash {count, first, locked} in ms; ARGV: free attempts, window ms, base lock ms, max lock ms
_FAIL = """
local now_s, now_us = unpack(redis.call('TIME'))
local now = now_s * 1000 + math.floor(now_us / 1000)
local first = tonumber(redis.call('HGET', KEYS[1], 'first') or '0')
if first == 0 or now - first > tonumber(ARGV[2]) then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'first', now, 'count', 0, 'locked', 0)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
local count = redis.call('HINCRBY', KEYS[1], 'count', 1)
local over = count - tonumber(ARGV[1])
if over >= 0 then
  local lock = math.min(tonumber(ARGV[4]), tonumber(ARGV[3]) * 2 ^ over)
  redis.call('HSET', KEYS[1], 'locked', now + lock)
end
return count
"""

_WAIT = """
local now_s, now_us = unpack(redis.call('TIME'))
local now = now_s * 1000 + math.floor(now_us / 1000)
local locked = tonumber(redis.call('HGET', KEYS[1], 'locked') or '0')
return math.max(0, math.ceil((locked - now) / 1000))
"""


class RedisRateLimiter:
    def __init__(self, redis: Redis, per_minute: int):
        self._limit = per_minute
        self._script = redis.register_script(_RATE)
        self._counter = 0

    async def check(self, key: str) -> int:
        if self._limit <= 0:
            return 0
        self._counter += 1
        member = f"{id(self)}:{self._counter}"
        return int(await self._script(keys=[f"{_PREFIX}chat:{key}"], args=[self._limit, 60_000, member]))


class RedisLoginThrottle:
    def __init__(
        self,
        redis: Redis,
        free_attempts: int = LOGIN_FREE_ATTEMPTS,
        window_s: float = LOGIN_WINDOW_S,
        base_lock_s: float = LOGIN_BASE_LOCK_S,
        max_lock_s: float = LOGIN_MAX_LOCK_S,
    ):
        self._redis = redis
        self._args = [free_attempts, int(window_s * 1000), int(base_lock_s * 1000), int(max_lock_s * 1000)]
        self._fail = redis.register_script(_FAIL)
        self._wait = redis.register_script(_WAIT)

    async def retry_after_s(self, key: str) -> int:
        return int(await self._wait(keys=[_key(key)]))

    async def record_failure(self, key: str) -> None:
        await self._fail(keys=[_key(key)], args=self._args)

    async def record_success(self, key: str) -> None:
        await self._redis.delete(_key(key))


def _key(email: str) -> str:
    return f"{_PREFIX}login:{email}"


class _Fallback:
    """Redis first; this process when Redis fails (logged once per outage, and once on its end)."""

    def __init__(self, what: str):
        self._what = what
        self._degraded = False

    async def call(self, shared: Callable[[], Awaitable[T]], local: Callable[[], Awaitable[T]]) -> T:
        try:
            result = await shared()
        except (RedisError, OSError) as exc:
            if not self._degraded:
                self._degraded = True
                log.warning("Redis is unreachable (%s): the %s counts in this process meanwhile", exc, self._what)
            return await local()
        if self._degraded:
            self._degraded = False
            log.warning("Redis is back: the %s counts in Redis again", self._what)
        return result


class FallbackRateLimiter:
    """The chat rate limit in Redis, in this process while Redis is down."""

    def __init__(self, redis: Redis, per_minute: int):
        self._shared = RedisRateLimiter(redis, per_minute)
        self._local: ChatLimiter = RateLimiter(per_minute)
        self._fallback = _Fallback("chat rate limit")

    async def check(self, key: str) -> int:
        return await self._fallback.call(lambda: self._shared.check(key), lambda: self._local.check(key))


class FallbackLoginThrottle:
    """The login throttle in Redis, in this process while Redis is down."""

    def __init__(self, redis: Redis):
        self._shared = RedisLoginThrottle(redis)
        self._local: LoginGuard = LoginThrottle()
        self._fallback = _Fallback("login throttle")

    async def retry_after_s(self, key: str) -> int:
        return await self._fallback.call(
            lambda: self._shared.retry_after_s(key), lambda: self._local.retry_after_s(key)
        )

    async def record_failure(self, key: str) -> None:
        await self._fallback.call(lambda: self._shared.record_failure(key), lambda: self._local.record_failure(key))

    async def record_success(self, key: str) -> None:
        # both: a failure counted here during an outage must not outlive the correct password
        await self._local.record_success(key)
        await self._fallback.call(lambda: self._shared.record_success(key), _nothing)


async def _nothing() -> None:
    return None
