"""Which memchat processes serve this PostgreSQL database (the `instances` table, owned here).

The turn itself is safe across instances without Redis (ownership and leases are in the database),
but the chat rate limit, the login throttle, resume and stop would silently be per process. So on
PostgreSQL each process registers itself at start-up and refreshes its row while it runs; a process
without `MEMCHAT_REDIS_URL` refuses to start while another instance is live, and so does one with
Redis while a live instance runs without it. SQLite has one writer and needs none of this.

A row is live while it was seen within two leases. A row of this host whose process is gone (a
crash, `kill -9`, a container restarted with the same pid) is stale at once, so a restart after a
crash is never refused.
"""

import os
import socket
from typing import cast

from sqlalchemy import Table, delete, insert, select, text, update
from sqlalchemy.engine import Connection

from memchat.models.instance import Instance

instances = cast(Table, Instance.__table__)
_REGISTER_LOCK = 0x6D656D63  # "memc"


class SharedStateRequired(RuntimeError):
    """Another instance serves the database and they cannot share limits, resume and stop."""


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stale_here(host: str, pid: int) -> bool:
    return host == socket.gethostname() and (pid == os.getpid() or not _process_alive(pid))


def register_instance(conn: Connection, instance_id: str, *, shared: bool, now_ms: int, lease_ms: int) -> None:
    """Register this process, or raise SharedStateRequired naming the instance in the way. Two
    processes starting at once are serialized by an advisory lock: one of them sees the other."""
    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _REGISTER_LOCK})
    conn.execute(delete(instances).where(instances.c.seen_at_ms < now_ms - 10 * lease_ms))
    rows = conn.execute(select(instances).where(instances.c.seen_at_ms >= now_ms - 2 * lease_ms)).all()
    others = [row for row in rows if row.id != instance_id and not _stale_here(row.host, row.pid)]
    if not shared and others:
        raise SharedStateRequired(
            f"another memchat instance ({others[0].host}, pid {others[0].pid}) serves this PostgreSQL "
            "database: several instances need MEMCHAT_REDIS_URL (shared rate limits, login throttle, "
            "resume and stop). Set it on every instance, or stop the other one."
        )
    unshared = [row for row in others if not row.shared]
    if shared and unshared:
        raise SharedStateRequired(
            f"a memchat instance without MEMCHAT_REDIS_URL ({unshared[0].host}, pid {unshared[0].pid}) "
            "serves this PostgreSQL database: set MEMCHAT_REDIS_URL on every instance."
        )
    conn.execute(
        insert(instances).values(
            id=instance_id,
            host=socket.gethostname(),
            pid=os.getpid(),
            shared=shared,
            started_at_ms=now_ms,
            seen_at_ms=now_ms,
        )
    )


def seen(conn: Connection, instance_id: str, *, now_ms: int) -> None:
    conn.execute(update(instances).where(instances.c.id == instance_id).values(seen_at_ms=now_ms))


def unregister_instance(conn: Connection, instance_id: str) -> None:
    conn.execute(delete(instances).where(instances.c.id == instance_id))
