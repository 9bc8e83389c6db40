"""Turn leases for the life of the process, and what a restart finds half-done.

A turn in progress carries its owner instance and a lease (commit point 1); the owner renews the
leases of the turns it answers, and any instance marks interrupted the turns whose lease ran out
(their instance died or lost the database). At start-up, extractions a dead process never ran are
run.
"""

import asyncio
import logging

from sqlalchemy.exc import DBAPIError

from memchat.chat.services import ChatServices
from memchat.clock import now_ms
from memchat.conversations import messages
from memchat.db.engine import Database
from memchat.instances import seen
from memchat.memories.extraction.pipeline import MemoryPipeline
from memchat.memories.extraction.run import extract_safely
from memchat.models.message import EXTRACTION_PENDING
from memchat.observability import metrics

log = logging.getLogger("memchat.after_turn")


async def interrupt_expired_turns(db: Database) -> int:
    """Turns whose lease ran out become interrupted: their instance died (or lost the database).
    Any instance may do this, at any time: a live lease is never touched."""
    async with db.write() as session:
        count = await messages.interrupt_expired_turns(session, now_ms())
    metrics.leases_expired(count)
    return count


async def watch_leases(services: ChatServices) -> None:
    """Runs for the life of the process. Three times a lease: renew the leases of the turns this
    instance is answering (one statement for all of them); once a lease: mark interrupted the
    turns whose lease ran out (their instance died), whoever owned them."""
    lease_s = services.limits.turn_lease_s
    rounds = 0
    while True:
        await asyncio.sleep(lease_s / 3)
        rounds += 1
        try:
            if services.registered:
                await services.db.run_write(seen, services.instance_id, now_ms=now_ms())
            if services.active_turns:
                until = now_ms() + int(lease_s * 1000)
                ids = sorted(services.active_turns)
                await services.db.run_write(messages.renew_leases, ids, owner=services.instance_id, until_ms=until)
                metrics.leases_renewed(len(ids))
            if rounds % 3 == 0 and (count := await interrupt_expired_turns(services.db)):
                log.info("%d turns whose lease ran out marked interrupted", count)
        except DBAPIError as exc:
            log.warning("keeping turn leases failed: %s", exc.orig)
        except Exception:
            log.exception("keeping turn leases failed")


async def recover_unfinished_turns(db: Database, memory: MemoryPipeline) -> tuple[int, int]:
    """At start-up: mark turns whose lease ran out, run extraction a dead process never ran.
    Other instances' live turns are left alone.

    Returns (interrupted turns marked, extractions run).
    """
    interrupted = await interrupt_expired_turns(db)
    async with db.read() as session:
        pending = await messages.message_ids_in_state(session, extraction_state=EXTRACTION_PENDING)
    for message_id in pending:
        await extract_safely(db, memory, message_id)
    if interrupted or pending:
        log.info("recovered %d interrupted turns, ran %d pending extractions", interrupted, len(pending))
    return interrupted, len(pending)
