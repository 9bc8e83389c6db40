"""/mcp: the Model Context Protocol over streamable HTTP, authenticated like the REST API.

Every HTTP request to /mcp carries `Authorization: Bearer <login token or API key>`, checked here
against the database before the MCP SDK reads the request (401 `{"error": ...}` otherwise, like
any route); the caller then rides in the ASGI scope to the tools (`tools.caller`).

The SDK runs stateless: no MCP session lives in one process's memory, so any instance answers any
request (clients of the 2026-07-28 protocol are sessionless anyway; older ones get no
`Mcp-Session-Id`, and GET, which would open a stream for server-initiated messages, is a 405).
Replies are plain JSON, not SSE: no tool streams. The SDK's DNS-rebinding
guard (a Host allowlist of localhost) is off: it protects servers that trust whoever can reach
them, and every request here needs a bearer credential, which a rebinding page does not have.
The SDK is imported and the server built on the first authenticated request, not at start.
"""

import asyncio
import importlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from memchat.auth.dependencies import authenticate_bearer
from memchat.errors import ServiceUnavailable, Unauthorized
from memchat.mcp_tools.parts import CALLER_KEY, Caller, McpParts

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

log = logging.getLogger("memchat.mcp")

MCP_PATH = "/mcp"
# What the SDK's clients send besides Authorization and Content-Type (CORS must allow them)
MCP_REQUEST_HEADERS = ("Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name")
# The SDK's modules, ~0.5 s of CPU to import: loaded on the first /mcp request, not at start
_SDK_MODULES = ("mcp.server.transport_security", "memchat.mcp_tools.tools")


def _bearer_token(scope: Scope) -> str:
    scheme, _, token = Headers(scope=scope).get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("missing bearer token", code="missing_token")
    return token.strip()


def _import_sdk() -> None:
    for name in _SDK_MODULES:
        importlib.import_module(name)


def _build() -> "tuple[ASGIApp, StreamableHTTPSessionManager]":
    """The SDK's server with memchat's tools, and its ASGI app (the modules are imported by now)."""
    from mcp.server.transport_security import TransportSecuritySettings

    from memchat.mcp_tools.tools import build_server

    server = build_server()
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return app, server.session_manager


class McpEndpoint:
    """The ASGI app behind the /mcp route. Serves while `serving` is entered (the app's lifespan);
    a new server is built for each lifespan, but only once a request needs it: most instances never
    see an MCP client, and the SDK's imports are a quarter of the app's start-up CPU.

    The SDK's session manager runs an anyio task group that must be entered and left in one task, so
    a task of `serving` owns it: it waits until the first authenticated request asks (`_wanted`),
    imports the SDK (in a thread, the event loop keeps serving), builds the server, enters the
    session manager's run() and sets `_ready`; it leaves run() when the lifespan ends. Requests that
    arrive during the build all wait for that one build."""

    def __init__(self) -> None:
        self._app: ASGIApp | None = None
        self._parts: McpParts | None = None
        self._wanted: asyncio.Event | None = None
        self._ready: asyncio.Event | None = None
        self._failure: BaseException | None = None

    @asynccontextmanager
    async def serving(self, parts: McpParts) -> AsyncIterator[None]:
        wanted, ready, stop = asyncio.Event(), asyncio.Event(), asyncio.Event()
        self._parts, self._wanted, self._ready, self._failure = parts, wanted, ready, None
        runner = asyncio.create_task(self._run(wanted, ready, stop), name="mcp-server")
        try:
            yield
        finally:
            self._parts = None
            stop.set()
            wanted.set()  # a runner still waiting for a first request wakes, sees `stop` and returns
            await runner
            self._wanted = self._ready = None

    async def _run(self, wanted: asyncio.Event, ready: asyncio.Event, stop: asyncio.Event) -> None:
        await wanted.wait()
        try:
            if stop.is_set():
                return
            await asyncio.to_thread(_import_sdk)
            app, manager = _build()
            async with manager.run():
                self._app = app
                ready.set()
                await stop.wait()
        except Exception as exc:
            log.exception("the MCP server failed")
            self._failure = exc
        finally:
            self._app = None
            ready.set()  # whoever waits for a server that will not come is answered (503 or 500)

    async def _started(self) -> ASGIApp:
        """The SDK's ASGI app, built by the first request that asks for it."""
        wanted, ready = self._wanted, self._ready
        if wanted is None or ready is None:
            raise ServiceUnavailable("the MCP server is not running", code="mcp_unavailable")
        wanted.set()
        await ready.wait()
        if self._app is not None:
            return self._app
        if self._failure is not None:
            raise RuntimeError("the MCP server could not be started") from self._failure
        raise ServiceUnavailable("the MCP server is not running", code="mcp_unavailable")

    def route(self) -> Route:
        """POST (and the GET and DELETE of older clients) at /mcp; not in the OpenAPI document."""
        return Route(MCP_PATH, self, include_in_schema=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        parts = self._parts
        if parts is None:
            raise ServiceUnavailable("the MCP server is not running", code="mcp_unavailable")
        if scope["method"] == "GET":
            # The SDK would hold a server-to-client SSE stream open that, with no sessions, nothing
            # ever writes to; the protocol lets a server without one answer 405.
            raise HTTPException(405, "no server-to-client stream: POST MCP messages here", {"Allow": "POST"})
        user = await authenticate_bearer(parts.db, parts.tokens, parts.background, _bearer_token(scope))
        app = self._app or await self._started()
        await app({**scope, CALLER_KEY: Caller(user.id, parts)}, receive, send)
