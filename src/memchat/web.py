"""Serves the built web console (web/dist) at / with an SPA fallback; /api and /v1 stay the API's."""

from pathlib import Path

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from memchat.errors import NotFound

# Paths under these are the API's: an unknown one is a JSON 404 whatever the method, never the console.
API_PREFIXES = ("api", "v1")

_NOT_BUILT = """<!doctype html><html lang="zh"><meta charset="utf-8"><title>memchat</title>
<body style="font-family:sans-serif;max-width:40em;margin:4em auto">
<h1>memchat</h1><p>The API is running at <code>/api</code>
(docs: <a href="/docs">/docs</a>).</p>
<p>The web console is not built. Build it with:</p>
<pre>cd web &amp;&amp; npm ci &amp;&amp; npm run build</pre>
<p>then restart <code>memchat serve</code>.</p></body></html>"""


def default_dist_dir() -> Path:
    return Path.cwd() / "web" / "dist"


def is_api_path(path: str) -> bool:
    """`path` without its leading slash, as the console route sees it."""
    return any(path == prefix or path.startswith(f"{prefix}/") for prefix in API_PREFIXES)


class _ConsoleRoute(Route):
    """The console's catch-all, blind to API paths.

    Were it to match them, an unknown API path would be the console's (a page for GET, a 405 for
    the other methods, since the catch-all takes only GET). Matching nothing there, the router
    falls through to its default, a 404; a known API path with a wrong method stays a 405.
    """

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, child_scope = super().matches(scope)
        if match is not Match.NONE and is_api_path(child_scope["path_params"]["path"]):
            return Match.NONE, {}
        return match, child_scope


def _unknown_route(fallback: ASGIApp) -> ASGIApp:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            raise NotFound(f"no such route: {scope['method']} {scope['path']}")
        await fallback(scope, receive, send)

    return app


def mount_console(app: FastAPI, dist_dir: Path) -> None:
    dist = dist_dir.resolve()

    async def console(request: Request) -> Response:
        path: str = request.path_params["path"]
        index = dist / "index.html"
        if not index.is_file():
            return HTMLResponse(_NOT_BUILT)
        candidate = (dist / path).resolve()
        if path and candidate.is_relative_to(dist) and candidate.is_file():
            return FileResponse(candidate)
        return FileResponse(index, headers={"Cache-Control": "no-cache"})

    app.router.routes.append(_ConsoleRoute("/{path:path}", console, methods=["GET"], include_in_schema=False))
    app.router.default = _unknown_route(app.router.default)
