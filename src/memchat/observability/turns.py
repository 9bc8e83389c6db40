"""One turn's measurements: its metrics and its spans, from the request to the reply stored.

The turn's span has children for commit point 1, the upstream call (to its first token), commit
point 2 and the memory extraction; the histograms take the same timings.
"""

import time
from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry import trace

from memchat.observability import metrics, tracing

_COMMITS = {"commit_1": "1", "commit_2": "2"}


class TurnWatch:
    __slots__ = ("_ended", "_upstream_s", "span", "started", "wire")

    def __init__(self, wire: str) -> None:
        self.wire = wire
        self.started = time.perf_counter()
        self._upstream_s = 0.0
        self._ended = False
        self.span = tracing.tracer.start_span("memchat.turn", attributes={"memchat.wire": wire})

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        """A part of the turn: a child span, and its histogram where it has one."""
        started = time.perf_counter()
        context = trace.set_span_in_context(self.span)
        with tracing.tracer.start_as_current_span(f"memchat.{name}", context=context):
            try:
                yield
            finally:
                elapsed = time.perf_counter() - started
                if not metrics.enabled:
                    pass
                elif name == "upstream":
                    self._upstream_s = elapsed
                    metrics.UPSTREAM_TTFT.observe(elapsed)
                elif name in _COMMITS:
                    metrics.COMMIT_DURATION.labels(_COMMITS[name]).observe(elapsed)

    @contextmanager
    def current(self) -> Iterator[None]:
        """The turn's span is current (what starts here, a task included, is its child)."""
        with trace.use_span(self.span, end_on_exit=False):
            yield

    def responded(self) -> None:
        """The response starts now: memchat's added time to first byte is known."""
        if metrics.enabled:
            added = time.perf_counter() - self.started - self._upstream_s
            metrics.TURN_ADDED_TTFB.labels(self.wire).observe(max(added, 0.0))
            metrics.ACTIVE_STREAMS.inc()

    def discard(self) -> None:
        """Not a turn after all (refused, or a stored reply replayed): only its span ends."""
        if not self._ended:
            self._ended = True
            self.span.end()

    def ended(self, outcome: str, streamed: bool = True) -> None:
        """The turn is over (again is harmless)."""
        if self._ended:
            return
        self._ended = True
        if metrics.enabled:
            metrics.TURNS.labels(outcome, self.wire).inc()
            metrics.TURN_DURATION.labels(self.wire).observe(time.perf_counter() - self.started)
            if streamed:
                metrics.ACTIVE_STREAMS.dec()
        self.span.set_attribute("memchat.outcome", outcome)
        if outcome == "failed":
            self.span.set_status(trace.StatusCode.ERROR)
        self.span.end()
