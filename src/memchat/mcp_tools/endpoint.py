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
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from memchat.auth.dependencies import authenticate_bearer
from memchat.errors import ServiceUnavailable, Unauthorized
from memchat.mcp_tools.tools import CALLER_KEY, Caller, McpParts, build_server

MCP_PATH = "/mcp"
# What the SDK's clients send besides Authorization and Content-Type (CORS must allow them)
MCP_REQUEST_HEADERS = ("Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name")


def _bearer_token(scope: Scope) -> str:
    scheme, _, token = Headers(scope=scope).get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("missing bearer token", code="missing_token")
    return token.strip()


class McpEndpoint:
    """The ASGI app behind the /mcp route. Serves while `serving` is entered (the app's lifespan),
    which runs the SDK's session manager; a new server is built for each lifespan."""

    def __init__(self) -> None:
        self._app: ASGIApp | None = None
        self._parts: McpParts | None = None

    @asynccontextmanager
    async def serving(self, parts: McpParts) -> AsyncIterator[None]:
        server = build_server()
        app = server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            stateless_http=True,
            json_response=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        async with server.session_manager.run():
            self._app, self._parts = app, parts
            try:
                yield
            finally:
                self._app, self._parts = None, None

    def route(self) -> Route:
        """POST (and the GET and DELETE of older clients) at /mcp; not in the OpenAPI document."""
        return Route(MCP_PATH, self, include_in_schema=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app, parts = self._app, self._parts
        if app is None or parts is None:
            raise ServiceUnavailable("the MCP server is not running", code="mcp_unavailable")
        if scope["method"] == "GET":
            # The SDK would hold a server-to-client SSE stream open that, with no sessions, nothing
            # ever writes to; the protocol lets a server without one answer 405.
            raise HTTPException(405, "no server-to-client stream: POST MCP messages here", {"Allow": "POST"})
        user = await authenticate_bearer(parts.db, parts.tokens, parts.background, _bearer_token(scope))
        await app({**scope, CALLER_KEY: Caller(user.id, parts)}, receive, send)
