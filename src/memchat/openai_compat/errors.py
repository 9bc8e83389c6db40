"""Errors on /v1 in OpenAI's shape: {"error": {"message", "type", "param", "code"}}.

memchat's own handlers (app.install_error_handlers) render every error as {"error": {"code",
"message"}}; under /v1 each of them is wrapped to answer OpenAI's shape instead, with OpenAI's
statuses (a request that does not validate is a 400, not a 422) and `model_not_found` for an
agent that is not the caller's. Headers such as Retry-After stay.
"""

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

V1_PREFIX = "/v1"
_TYPES = {401: "authentication_error", 403: "permission_error", 404: "invalid_request_error", 429: "rate_limit_error"}
_CODES = {"agent_not_found": "model_not_found"}
_DROPPED_HEADERS = {"content-length", "content-type"}

Handler = Callable[[Request, Any], Response | Awaitable[Response]]


def is_v1_path(path: str) -> bool:
    return path == V1_PREFIX or path.startswith(f"{V1_PREFIX}/")


def error_type(status: int) -> str:
    if status in _TYPES:
        return _TYPES[status]
    return "server_error" if status >= 500 else "invalid_request_error"


def openai_error_body(status: int, message: str, *, code: str | None, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type(status), "param": param, "code": code}}


def openai_error(
    status: int, message: str, *, code: str | None, param: str | None = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(openai_error_body(status, message, code=code, param=param), status, headers=headers)


def _param(exc: Exception) -> str | None:
    """The first invalid field of a request that did not validate, as OpenAI names it (`messages`)."""
    if not isinstance(exc, RequestValidationError):
        return None
    for error in exc.errors():
        loc = [str(part) for part in error.get("loc", ()) if part != "body"]
        if loc:
            return ".".join(loc)
    return None


def _openai_shaped(handler: Handler) -> Handler:
    async def handle(request: Request, exc: Any) -> Response:
        answer = handler(request, exc)
        response = await answer if inspect.isawaitable(answer) else answer
        if not is_v1_path(request.url.path) or not isinstance(response, JSONResponse):
            return response
        error = orjson.loads(response.body).get("error", {})
        status = 400 if response.status_code == 422 else response.status_code
        headers = {k: v for k, v in response.headers.items() if k.lower() not in _DROPPED_HEADERS}
        code = error.get("code")
        return openai_error(
            status, str(error.get("message", "")), code=_CODES.get(code, code), param=_param(exc), headers=headers
        )

    return handle


def install_openai_error_shape(app: FastAPI) -> None:
    """After app.install_error_handlers: each handler answers OpenAI's shape under /v1."""
    for exc_class, handler in list(app.exception_handlers.items()):
        app.exception_handlers[exc_class] = _openai_shaped(handler)
