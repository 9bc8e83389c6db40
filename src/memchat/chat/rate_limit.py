"""Per-user sliding-window limit for /api/chat, in process memory."""

import math
import time
from collections import deque


class RateLimiter:
    def __init__(self, per_minute: int):
        self._limit = per_minute
        self._hits: dict[str, deque[float]] = {}

    def check(self, key: str) -> int:
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
