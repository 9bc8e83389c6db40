"""What the probes check: /livez (the process answers), /readyz and /healthz (it can take traffic).

/readyz is /healthz's checks (the database takes a write in time, Redis answers when configured)
and, with the embedded model, that model being ready; /healthz keeps answering 200 while the
embedded model loads, as it always has.
"""

import asyncio
import logging
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import RedisError
from sqlalchemy.exc import DBAPIError

from memchat.chat.shared_streams import REDIS_UNAVAILABLE
from memchat.db.engine import Database, ReadOnlyDatabase
from memchat.db.errors import is_busy
from memchat.llm.local import LocalModelServer
from memchat.observability import metrics

log = logging.getLogger("memchat.probes")

# the longest a probe waits to take a write transaction, and for Redis to answer PING
WRITE_TIMEOUT_S = 2.0
REDIS_TIMEOUT_S = 1.0


@dataclass(frozen=True)
class NotReady:
    code: str
    message: str


async def storage_problem(db: Database, redis: "Redis | None") -> NotReady | None:
    """Why the database or Redis cannot take this instance's traffic now, or None."""
    try:
        await asyncio.wait_for(db.check_writable(), WRITE_TIMEOUT_S)
    except ReadOnlyDatabase:
        return NotReady("database_read_only", "the database accepts no writes")
    except TimeoutError:
        return NotReady("database_busy", f"the database could not take a write in {WRITE_TIMEOUT_S:g} s")
    except DBAPIError as exc:
        if is_busy(exc):
            return NotReady("database_busy", "the database is locked by another writer")
        log.error("health check: the database cannot be written", exc_info=exc)
        return NotReady("database_unavailable", "the database cannot be written")
    if redis is not None:
        try:
            await asyncio.wait_for(redis.ping(), REDIS_TIMEOUT_S)
        except (RedisError, OSError, TimeoutError):
            if metrics.enabled:
                metrics.REDIS_ERRORS.labels("probe").inc()
            return NotReady(
                REDIS_UNAVAILABLE, "Redis cannot be reached: resume and stop fail, limits count per instance"
            )
    return None


def model_problem(local: LocalModelServer | None) -> NotReady | None:
    """The embedded model, when memchat runs one, not ready yet (or failed)."""
    if local is None or local.state == "ready":
        return None
    return NotReady("model_not_ready", f"the local model is {local.state}")
