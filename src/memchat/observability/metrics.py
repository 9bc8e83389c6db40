"""The Prometheus metrics, their one registry, and /metrics.

Every label is bounded: a route template, a status, an outcome, a wire format, an error code;
never a user, agent or conversation id. Under `memchat serve --workers N` the CLI sets
PROMETHEUS_MULTIPROC_DIR before any worker imports this module, so that each process writes its
values to files there and a scrape of any worker adds them up (prometheus-client's multiprocess
mode); gauges then sum the live processes only.
"""

import os
import time

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client import multiprocess as _multiprocess

from memchat.observability.workers import MULTIPROC_ENV

# MEMCHAT_METRICS=false: nothing is recorded and /metrics is not served (set by create_app)
enabled = True

# seconds: a turn's setup is milliseconds, an upstream's first token up to a minute
_FAST = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
_SLOW = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)

HTTP_REQUESTS = Counter(
    "memchat_http_requests",
    "HTTP requests answered, by route template, method and status",
    ["route", "method", "status"],
)
TURNS = Counter(
    "memchat_turns",
    "Chat turns by outcome (completed, incomplete, stopped, failed, interrupted) and wire format",
    ["outcome", "wire"],
)
TURN_ADDED_TTFB = Histogram(
    "memchat_turn_added_ttfb_seconds",
    "Time memchat adds before a turn's first byte: from the request to the response, less the upstream's wait",
    ["wire"],
    buckets=_FAST,
)
TURN_DURATION = Histogram(
    "memchat_turn_duration_seconds", "A turn from its request to its reply stored", ["wire"], buckets=_SLOW
)
UPSTREAM_TTFT = Histogram(
    "memchat_upstream_ttft_seconds", "The upstream's time to first token, retries included", buckets=_SLOW
)
UPSTREAM_ERRORS = Counter("memchat_upstream_errors", "Failed upstream attempts by error code", ["code"])
UPSTREAM_RETRIES = Counter("memchat_upstream_retries", "Upstream attempts retried, by the failure's code", ["code"])
ACTIVE_STREAMS = Gauge("memchat_active_streams", "Turns streaming a reply now", multiprocess_mode="livesum")
COMMIT_DURATION = Histogram(
    "memchat_commit_duration_seconds",
    "Commit point 1 (the user message) and 2 (the reply) from start to commit",
    ["point"],
    buckets=_FAST,
)
EXTRACTION_LAG = Histogram(
    "memchat_memory_extraction_lag_seconds",
    "From the reply saved to its memories stored",
    ["mode"],
    buckets=_SLOW,
)
AFTER_TURN_QUEUE = Gauge(
    "memchat_after_turn_queue",
    "Background after-turn jobs (extraction, vectors, summary) not done yet",
    multiprocess_mode="livesum",
)
SUMMARY_JOBS = Counter("memchat_summary_jobs", "LLM summary jobs run, by result", ["result"])
DB_POOL_IN_USE = Gauge(
    "memchat_db_pool_in_use",
    "Database connections checked out now, by pool (main; sqlite_writer: SQLite's one writer)",
    ["pool"],
    multiprocess_mode="livesum",
)
DB_WRITE_WAIT = Histogram(
    "memchat_db_write_wait_seconds",
    "Time a turn's write transaction waited for its connection (SQLite: for the one writer)",
    buckets=_FAST,
)
REDIS_ERRORS = Counter("memchat_redis_errors", "Redis calls that failed, by where", ["where"])
LEASES = Counter("memchat_leases", "Turn leases renewed, and expired turns marked interrupted", ["event"])
RECALLS = Counter(
    "memchat_memory_recalls",
    "Ranked recalls by where similarity came from: skipped (every memory fits, nothing to choose), "
    "embedded (the message embedded before the upstream call), failed (embedding failed or timed out)",
    ["similarity"],
)
EMBEDDINGS = Counter(
    "memchat_embeddings",
    "Texts the memory work embedded, by where the vector came from: model (computed) or reused "
    "(the same text embedded moments before, in the same turn or a recent one)",
    ["source"],
)
# how late the event loop runs what is due: every open stream's next chunk waits that long
_LAG = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
EVENT_LOOP_LAG = Histogram(
    "memchat_event_loop_lag_seconds",
    "How late the event loop woke a timer due every 100 ms (a busy loop delays every stream)",
    buckets=_LAG,
)
STREAM_DELTA_DELAY = Histogram(
    "memchat_stream_delta_delay_seconds",
    "From a reply delta read off the upstream to the client's response taking it, per batch (its oldest delta)",
    buckets=_LAG,
)
REFUSALS = Counter("memchat_refusals", "Requests refused with 429, by error code", ["code"])


def set_enabled(on: bool) -> None:
    global enabled
    enabled = on


def upstream_failed(code: str, *, retried: bool) -> None:
    if enabled:
        UPSTREAM_ERRORS.labels(code).inc()
        if retried:
            UPSTREAM_RETRIES.labels(code).inc()


def write_waited(since: float) -> None:
    if enabled:
        DB_WRITE_WAIT.observe(time.perf_counter() - since)


def recalled(similarity: str) -> None:
    if enabled:
        RECALLS.labels(similarity).inc()


def embedded(*, computed: int, reused: int) -> None:
    if enabled:
        if computed:
            EMBEDDINGS.labels("model").inc(computed)
        if reused:
            EMBEDDINGS.labels("reused").inc(reused)


def leases_renewed(count: int) -> None:
    if enabled and count:
        LEASES.labels("renewed").inc(count)


def leases_expired(count: int) -> None:
    """Turns whose instance died: interrupted (their wire format is not known here)."""
    if enabled and count:
        LEASES.labels("expired").inc(count)
        TURNS.labels("interrupted", "unknown").inc(count)


def extraction_done(mode: str, saved_at: float) -> None:
    if enabled:
        EXTRACTION_LAG.labels(mode).observe(time.perf_counter() - saved_at)


def after_turn_queued() -> None:
    if enabled:
        AFTER_TURN_QUEUE.inc()


def after_turn_done() -> None:
    if enabled:
        AFTER_TURN_QUEUE.dec()


def summary_job(result: str) -> None:
    if enabled:
        SUMMARY_JOBS.labels(result).inc()


def multiprocess() -> bool:
    return bool(os.environ.get(MULTIPROC_ENV))


def scrape() -> tuple[bytes, str]:
    """The exposition of this process, or of every worker's when several share the directory."""
    if multiprocess():
        registry = CollectorRegistry()
        _multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


def process_exited() -> None:
    """A worker going away: its live gauges stop counting."""
    if multiprocess():
        _multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]
