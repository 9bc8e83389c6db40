"""Serves the built web console (web/dist) at / with an SPA fallback; /api stays the API's."""

from pathlib import Path

from fastapi import FastAPI
from starlette.responses import FileResponse, HTMLResponse, Response

from memchat.errors import NotFound

_NOT_BUILT = """<!doctype html><html lang="zh"><meta charset="utf-8"><title>memchat</title>
<body style="font-family:sans-serif;max-width:40em;margin:4em auto">
<h1>memchat</h1><p>The API is running at <code>/api</code>
(docs: <a href="/docs">/docs</a>).</p>
<p>The web console is not built. Build it with:</p>
<pre>cd web &amp;&amp; npm ci &amp;&amp; npm run build</pre>
<p>then restart <code>memchat serve</code>.</p></body></html>"""


def default_dist_dir() -> Path:
    return Path.cwd() / "web" / "dist"


def mount_console(app: FastAPI, dist_dir: Path) -> None:
    dist = dist_dir.resolve()

    @app.get("/{path:path}", include_in_schema=False)
    async def console(path: str) -> Response:
        if path == "api" or path.startswith("api/"):
            raise NotFound("no such API route", code="route_not_found")
        index = dist / "index.html"
        if not index.is_file():
            return HTMLResponse(_NOT_BUILT)
        candidate = (dist / path).resolve()
        if path and candidate.is_relative_to(dist) and candidate.is_file():
            return FileResponse(candidate)
        return FileResponse(index, headers={"Cache-Control": "no-cache"})
