"""One error base class: every expected failure carries an HTTP status and a machine code."""

from typing import Any


class MemchatError(Exception):
    status_code = 400
    code = "bad_request"

    def __init__(self, message: str, *, code: str | None = None, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.headers = headers

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message}}


class NotFound(MemchatError):
    status_code = 404
    code = "not_found"


class Unauthorized(MemchatError):
    status_code = 401
    code = "unauthorized"


class Conflict(MemchatError):
    status_code = 409
    code = "conflict"


class InvalidInput(MemchatError):
    status_code = 422
    code = "invalid_input"


class PayloadTooLarge(MemchatError):
    status_code = 413
    code = "payload_too_large"


class TooManyRequests(MemchatError):
    status_code = 429
    code = "rate_limited"


class UpstreamError(MemchatError):
    """The LLM upstream failed before any text reached the client."""

    status_code = 502
    code = "upstream_error"

    def __init__(self, message: str, *, status_code: int = 502, code: str = "upstream_error"):
        super().__init__(message, code=code)
        self.status_code = status_code


class ServiceUnavailable(MemchatError):
    status_code = 503
    code = "unavailable"


class Forbidden(MemchatError):
    """The caller is who they say, and still may not do this (a 401 would end the console's session)."""

    status_code = 403
    code = "forbidden"
