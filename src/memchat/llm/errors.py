"""How an upstream failure reaches the client: one mapping for the stream (aiohttp) and the SDK calls.

The openai SDK is imported only by the first SDK call (memchat.llm.client), so its exception classes
are looked at only once it is loaded: before that no SDK error can exist.
"""

import sys

import aiohttp

from memchat.errors import UpstreamError


class UpstreamStreamError(Exception):
    """The upstream sent an error object or an unreadable frame in the middle of its stream."""


class UpstreamEventTooLarge(UpstreamStreamError):
    """One server-sent event grew past the limit without ending."""

    def __init__(self, limit: int):
        super().__init__(f"an upstream event is larger than {limit} bytes")
        self.limit = limit


# What a broken stream raises once its body is being read.
STREAM_ERRORS: tuple[type[Exception], ...] = (aiohttp.ClientError, TimeoutError, UpstreamStreamError)

# Statuses worth another try before any text exists.
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


def status_error(status: int) -> UpstreamError:
    if status == 429:
        return UpstreamError(
            "the language model is rate limited; try again shortly", status_code=503, code="upstream_rate_limited"
        )
    if status >= 500:
        return UpstreamError(f"the language model failed (HTTP {status})", status_code=502, code="upstream_error")
    return UpstreamError(
        f"the language model refused the request (HTTP {status})", status_code=502, code="upstream_rejected"
    )


def timeout_error() -> UpstreamError:
    return UpstreamError("the language model did not answer in time", status_code=504, code="upstream_timeout")


def unreachable_error() -> UpstreamError:
    return UpstreamError("the language model could not be reached", status_code=502, code="upstream_unreachable")


def empty_reply_error() -> UpstreamError:
    return UpstreamError("the language model returned no text", status_code=502, code="upstream_empty")


def _sdk_error(exc: Exception) -> UpstreamError | None:
    """The mapping of an openai SDK error, or None for anything else."""
    if "openai" not in sys.modules:
        return None
    import openai  # loaded already: no import cost here

    if isinstance(exc, openai.APITimeoutError):  # (a subclass of APIConnectionError: first)
        return timeout_error()
    if isinstance(exc, openai.APIConnectionError):
        return unreachable_error()
    if isinstance(exc, openai.APIStatusError):
        return status_error(exc.status_code)
    return None


def upstream_error(exc: Exception) -> UpstreamError:
    """Map a stream or SDK failure to the error the client sees (never the upstream's raw body)."""
    if isinstance(exc, TimeoutError):
        return timeout_error()
    if isinstance(exc, aiohttp.ClientConnectorError | aiohttp.InvalidURL):
        return unreachable_error()
    if (sdk := _sdk_error(exc)) is not None:
        return sdk
    if isinstance(exc, UpstreamEventTooLarge):
        return UpstreamError(
            f"the language model sent an event larger than {exc.limit} bytes",
            status_code=502,
            code="upstream_event_too_large",
        )
    return UpstreamError("the language model stream failed", status_code=502, code="upstream_error")
