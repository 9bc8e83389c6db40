"""The event loop's own lateness, sampled: a timer due every 100 ms, and how late it fires.

A stream's chunk is late when the loop is busy elsewhere (a long synchronous step, a full garbage
collection, more work than the core holds); this says so from inside the server, whatever the
client or the network add (`memchat_event_loop_lag_seconds`).
"""

import asyncio

from memchat.observability import metrics

INTERVAL_S = 0.1


async def watch_event_loop(interval_s: float = INTERVAL_S) -> None:
    """Runs until cancelled; observes each wake-up's lateness when metrics are on."""
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + interval_s
        await asyncio.sleep(interval_s)
        if metrics.enabled:
            metrics.EVENT_LOOP_LAG.observe(max(0.0, loop.time() - due))
