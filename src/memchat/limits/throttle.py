"""The chat rate limit per user, and the login throttle per email: in this process, or in Redis.

The login throttle slows down password guessing: after a few failures for one email, logins wait
it out with a 429. With one process both live in its memory; with several instances (or
workers) they must be shared, in Redis (MEMCHAT_REDIS_URL, memchat.limits.shared), or each
instance would let its own share through.
"""

import math
import time
from collections import deque
from dataclasses import dataclass
from typing import Protocol


class ChatLimiter(Protocol):
    async def check(self, key: str) -> int:
        """Record a hit; 0 if allowed, else seconds until the next hit would be."""
        ...


class LoginGuard(Protocol):
    async def retry_after_s(self, key: str) -> int: ...
    async def record_failure(self, key: str) -> None: ...
    async def record_success(self, key: str) -> None: ...


@dataclass
class _Failures:
    count: int
    first_at: float
    locked_until: float


# The login throttle, the same in this process and in Redis: free attempts per email within the
# window, then a lock that doubles with each further failure, from the base up to the maximum.
LOGIN_FREE_ATTEMPTS = 5
LOGIN_WINDOW_S = 900.0
LOGIN_BASE_LOCK_S = 2.0
LOGIN_MAX_LOCK_S = 300.0


class LoginThrottle:
    """In this process: failures per email, a lock that doubles past the free attempts."""

    def __init__(
        self,
        free_attempts: int = LOGIN_FREE_ATTEMPTS,
        window_s: float = LOGIN_WINDOW_S,
        base_lock_s: float = LOGIN_BASE_LOCK_S,
        max_lock_s: float = LOGIN_MAX_LOCK_S,
    ):
        self._free = free_attempts
        self._window_s = window_s
        self._base_lock_s = base_lock_s
        self._max_lock_s = max_lock_s
        self._failures: dict[str, _Failures] = {}

    async def retry_after_s(self, key: str) -> int:
        """Seconds the caller must wait before trying this key again (0: go ahead)."""
        entry = self._failures.get(key)
        if entry is None:
            return 0
        now = time.monotonic()
        if now - entry.first_at > self._window_s:
            del self._failures[key]
            return 0
        return max(0, math.ceil(entry.locked_until - now))

    async def record_failure(self, key: str) -> None:
        now = time.monotonic()
        entry = self._failures.get(key)
        if entry is None or now - entry.first_at > self._window_s:
            entry = _Failures(count=0, first_at=now, locked_until=0.0)
            self._failures[key] = entry
        entry.count += 1
        over = entry.count - self._free
        if over >= 0:
            entry.locked_until = now + min(self._max_lock_s, self._base_lock_s * 2**over)
        if len(self._failures) > 100_000:  # bound memory under a spray of random emails
            self._failures.clear()

    async def record_success(self, key: str) -> None:
        self._failures.pop(key, None)


class RateLimiter:
    """In this process: a sliding minute of hits per key."""

    def __init__(self, per_minute: int):
        self._limit = per_minute
        self._hits: dict[str, deque[float]] = {}

    async def check(self, key: str) -> int:
        """Record a hit; 0 if allowed, else seconds until the next hit would be."""
        if self._limit <= 0:
            return 0
        now = time.monotonic()
        hits = self._hits.setdefault(key, deque())
        while hits and now - hits[0] >= 60.0:
            hits.popleft()
        if len(hits) >= self._limit:
            return max(1, math.ceil(60.0 - (now - hits[0])))
        hits.append(now)
        return 0
