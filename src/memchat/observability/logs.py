"""Log lines: readable text by default, one JSON object per line with MEMCHAT_LOG_FORMAT=json.

Every line carries the request id of the request it belongs to (a task started by a request keeps
it) and, when tracing is on, the trace id. Access lines of the probes and /metrics are left out.
Message text never goes into a log line of memchat's own; MEMCHAT_LOG_CONTENT=true is the debug
setting for the places that may add it.
"""

import logging
from contextvars import ContextVar
from typing import Any, Literal

from memchat.observability import tracing

request_id: ContextVar[str] = ContextVar("memchat_request_id", default="-")

QUIET_PATHS = ("/healthz", "/livez", "/readyz", "/metrics")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"
JSON_FIELDS = "%(asctime)s %(levelname)s %(name)s %(message)s %(request_id)s %(trace_id)s"


class RequestContext(logging.Filter):
    """Adds request_id and trace_id to every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        record.trace_id = tracing.current_trace_id()
        return True


class QuietProbes(logging.Filter):
    """Drops uvicorn's access lines for the probes and the scrape."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            path = args[2].split("?", 1)[0]
            return path not in QUIET_PATHS
        return True


def log_config(fmt: Literal["text", "json"], level: str = "info") -> dict[str, Any]:
    """A logging.config.dictConfig for memchat and uvicorn (given to uvicorn.run)."""
    formatter: dict[str, Any] = (
        {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": JSON_FIELDS,
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        }
        if fmt == "json"
        else {"format": TEXT_FORMAT}
    )
    handler = {
        "class": "logging.StreamHandler",
        "formatter": "main",
        "filters": ["context"],
        "stream": "ext://sys.stderr",
    }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": RequestContext}, "quiet": {"()": QuietProbes}},
        "formatters": {"main": formatter},
        "handlers": {"main": handler, "access": {**handler, "filters": ["context", "quiet"]}},
        "loggers": {
            "uvicorn": {"handlers": ["main"], "level": level.upper(), "propagate": False},
            "uvicorn.error": {"level": level.upper()},
            "uvicorn.access": {"handlers": ["access"], "level": level.upper(), "propagate": False},
        },
        "root": {"handlers": ["main"], "level": level.upper()},
    }
