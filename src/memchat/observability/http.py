"""The outermost middleware: a request id on every request, response and log line, and the
request counter by route template."""

import re
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memchat.observability import metrics
from memchat.observability.logs import request_id

HEADER = b"x-request-id"
# an id from a proxy (nginx's $request_id, a client's) is kept when it is short and plain
_ACCEPTED = re.compile(rb"[A-Za-z0-9._:-]{1,128}")


def _incoming_id(scope: Scope) -> str:
    for name, value in scope["headers"]:
        if name == HEADER:
            return value.decode("ascii") if _ACCEPTED.fullmatch(value) else uuid.uuid4().hex
    return uuid.uuid4().hex


class RequestObservation:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = _incoming_id(scope)
        token = request_id.set(rid)
        header = rid.encode("ascii")
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), (HEADER, header)]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            if metrics.enabled:
                route = scope.get("route")
                template = getattr(route, "path", None) or "unmatched"
                metrics.HTTP_REQUESTS.labels(template, scope["method"], str(status)).inc()
            request_id.reset(token)
