"""Request guards as a pure ASGI middleware (BaseHTTPMiddleware would break streaming): the body
cap, and no NUL in URLs (PostgreSQL cannot compare text with NUL)."""

from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodySizeLimit:
    def __init__(self, app: ASGIApp, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if "\x00" in scope.get("path", "") or b"%00" in scope.get("query_string", b"").lower():
            await _reject(send, 422, "invalid_input", "NUL characters are not allowed in URLs")
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit():
                if int(value) > self.max_bytes:
                    await self._reject(send)
                    return
                # The server enforces Content-Length itself: nothing to count, nothing to wrap.
                await self.app(scope, receive, send)
                return
        # No Content-Length (a chunked body): read it here, up to the cap, before the app parses
        # anything, so that a body over the cap is a 413 like one with a Content-Length.
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away before the body was in
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                await self._reject(send)
                return
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _reject(self, send: Send) -> None:
        await _reject(send, 413, "payload_too_large", f"the request body is larger than {self.max_bytes} bytes")


async def _reject(send: Send, status: int, code: str, message: str) -> None:
    body = orjson.dumps({"error": {"code": code, "message": message}})
    headers: list[Any] = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
