"""The outermost middleware: a request id on every request, response and log line, the request
counter by route template, and (tracing on) a span per request that the turn's span is a child of.

The request id and the span stay current to the end of the request's task, not reset on the way
out, so that the handler of an unhandled error (which runs outside every middleware) still
writes them into its 500 body.
"""

import re
import uuid

from opentelemetry import context, propagate, trace
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memchat.observability import metrics, tracing
from memchat.observability.logs import request_id

HEADER = b"x-request-id"
# an id from a proxy (nginx's $request_id, a client's) is kept when it is short and plain
_ACCEPTED = re.compile(rb"[A-Za-z0-9._:-]{1,128}")


def _incoming_id(scope: Scope) -> str:
    for name, value in scope["headers"]:
        if name == HEADER:
            return value.decode("ascii") if _ACCEPTED.fullmatch(value) else uuid.uuid4().hex
    return uuid.uuid4().hex


def _start_span(scope: Scope) -> trace.Span:
    carrier = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}
    span = tracing.tracer.start_span(
        f"{scope['method']} {scope['path']}", context=propagate.extract(carrier), kind=trace.SpanKind.SERVER
    )
    context.attach(trace.set_span_in_context(span))
    return span


class RequestObservation:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = _incoming_id(scope)
        request_id.set(rid)
        span = _start_span(scope) if tracing.active() else None
        header = rid.encode("ascii")
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = list(message.get("headers", ()))
                if not any(name.lower() == HEADER for name, _ in headers):
                    headers.append((HEADER, header))
                message["headers"] = headers
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            if metrics.enabled:
                metrics.HTTP_REQUESTS.labels(route, scope["method"], str(status)).inc()
            if span is not None:
                span.update_name(f"{scope['method']} {route}")
                span.set_attribute("http.response.status_code", status)
                if status >= 500:
                    span.set_status(trace.StatusCode.ERROR)
                span.end()
