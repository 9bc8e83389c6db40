"""memchat served exactly as `memchat serve` does, with SQLAlchemy event listeners counting its SQL.

    python -m bench.sql_probe_server --port 18092     (MEMCHAT_* environment as for memchat serve)

Listeners on the Engine class see every statement and commit of every engine the app creates.
Each one is attributed by the asyncio task it runs in: the request's own task (auth, the user
message, history and memories: commit point 1), the turn's relay task `turn-*` (the assistant
turn: commit point 2) and the background tasks `extract-*` (memory extraction, after the reply
and not on the response path). Extra routes, put in front of the app's own:
GET /_bench/sql (counts and the distinct statements), POST /_bench/sql/reset, GET
/_bench/sql/idle (true when no turn or background task is running).
"""

import argparse
import asyncio
import re
from collections import Counter
from typing import Any

import uvicorn
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from memchat.app import create_app
from memchat.settings import Settings

PHASES = ("request", "replySave", "afterReply")
_counts: dict[str, Counter[str]] = {p: Counter() for p in PHASES}
_statements: dict[str, Counter[str]] = {p: Counter() for p in PHASES}
_SPACES = re.compile(r"\s+")


def _phase() -> str:
    try:
        task = asyncio.current_task()
    except RuntimeError:
        return "request"
    name = task.get_name() if task is not None else ""
    if name.startswith("extract-"):
        return "afterReply"
    if name.startswith("turn-"):
        return "replySave"
    return "request"


def _shape(statement: str) -> str:
    text = _SPACES.sub(" ", statement).strip()
    return text if len(text) <= 160 else text[:157] + "..."


@event.listens_for(Engine, "before_cursor_execute")
def _on_statement(
    conn: Connection, _cursor: Any, statement: str, _parameters: Any, _context: Any, _executemany: bool
) -> None:
    phase = _phase()
    head = statement.lstrip()[:6].upper()
    _counts[phase]["statements"] += 1
    if head.startswith("BEGIN"):
        _counts[phase]["begins"] += 1
    elif head in ("SELECT", "INSERT", "UPDATE", "DELETE"):
        _counts[phase][head.lower() + "s"] += 1
    _statements[phase][_shape(statement)] += 1


@event.listens_for(Engine, "commit")
def _on_commit(conn: Connection) -> None:
    phase = _phase()
    _counts[phase]["commits"] += 1
    if conn.get_execution_options().get("memchat_write"):
        _counts[phase]["writeCommits"] += 1


@event.listens_for(Engine, "rollback")
def _on_rollback(_conn: Connection) -> None:
    _counts[_phase()]["rollbacks"] += 1


def install_probe_routes(app: Any) -> None:
    async def counts(_request: Request) -> Response:
        return JSONResponse(
            {
                "phases": {p: dict(_counts[p]) for p in PHASES},
                "statements": {p: dict(_statements[p].most_common()) for p in PHASES},
            }
        )

    async def reset(_request: Request) -> Response:
        for p in PHASES:
            _counts[p].clear()
            _statements[p].clear()
        return JSONResponse({"reset": True})

    async def idle(request: Request) -> Response:
        state = request.app.state.memchat
        return JSONResponse(len(state.background) == 0 and not state.live_turns)

    # In front of the console's catch-all GET route.
    app.router.routes[0:0] = [
        Route("/_bench/sql", counts, methods=["GET"]),
        Route("/_bench/sql/reset", reset, methods=["POST"]),
        Route("/_bench/sql/idle", idle, methods=["GET"]),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=18092)
    args = parser.parse_args()
    settings = Settings()
    settings.migrate_on_start = True
    app = create_app(settings)
    install_probe_routes(app)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", proxy_headers=False)


if __name__ == "__main__":
    main()
