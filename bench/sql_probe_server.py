"""memchat served as `memchat serve` does, with SQLAlchemy event listeners counting its SQL and timers.

    python -m bench.sql_probe_server --port 18092     (MEMCHAT_* environment as for memchat serve)

Listeners on the Engine class see every statement and commit of every engine the app creates.
Each one is attributed by the asyncio task it runs in: the request's own task (auth, the user
message, history and memories: commit point 1), the turn's relay task `turn-*` (the assistant
turn: commit point 2) and the background tasks `after-turn-*` (memory extraction, after the reply
and not on the response path). Rule extraction that runs right after the reply's commit, before
the body ends, is counted apart as `extractionInline`. Transactions that memchat runs on its
SQLite thread (Database.run_write) are attributed to the task that started them. Extra routes,
put in front of the app's own: GET /_bench/sql (counts, the distinct statements, timings), POST /_bench/sql/reset, GET
/_bench/sql/idle (true when no turn or background task is running).

Timings: the wall time of the turn's steps, by wrapping memchat's own functions in this process
(auth's user lookup, prepare_turn, the SDK call, waiting for the first text, the save), the time
SQL statements take from before to after the cursor call, and, from a pure ASGI wrapper, the
server-side time to the first body byte and to the end of the body of /api/chat.
"""

import argparse
import asyncio
import contextvars
import functools
import re
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from typing import Any

import uvicorn
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

import memchat.auth.dependencies as auth_deps_module
import memchat.chat.after_turn as after_turn_module
import memchat.chat.router as chat_router_module
import memchat.chat.turn as turn_module
from bench import variants
from bench.stats import summary_ms
from bench.variants import VARIANTS
from memchat.app import create_app
from memchat.db.engine import Database
from memchat.llm.client import LLMClient
from memchat.settings import Settings

PHASES = ("request", "replySave", "extractionInline", "afterReply")
_counts: dict[str, Counter[str]] = {p: Counter() for p in PHASES}
_statements: dict[str, Counter[str]] = {p: Counter() for p in PHASES}
_timings: defaultdict[str, list[float]] = defaultdict(list)
_request_started: contextvars.ContextVar[float] = contextvars.ContextVar("memchat_bench_request_started")
# The phase of a transaction running on the SQLite thread, where there is no task to ask.
_thread_phase: contextvars.ContextVar[str] = contextvars.ContextVar("memchat_bench_thread_phase", default="request")
_SPACES = re.compile(r"\s+")


def _timed(name: str, fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await fn(*args, **kwargs)
        finally:
            _timings[name].append(time.perf_counter() - started)

    return wrapper


def _timed_handler(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """The chat route's handler: when it starts (after body parsing and dependencies) and how long it runs."""

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        request_started = _request_started.get(None)
        if request_started is not None:
            _timings["0a server: request start to chat handler (body, validation, deps, auth)"].append(
                started - request_started
            )
        try:
            return await fn(*args, **kwargs)
        finally:
            _timings["4 chat handler: run_chat_turn until the response object"].append(time.perf_counter() - started)

    return wrapper


def install_timers() -> None:
    """Wrap the turn's steps where run_chat_turn and the auth dependency look them up."""
    chat_router_module.run_chat_turn = _timed_handler(chat_router_module.run_chat_turn)  # type: ignore[attr-defined,assignment]
    auth_deps_module.user_for_token = _timed("1 auth: user for token", auth_deps_module.user_for_token)  # type: ignore[attr-defined,assignment]
    turn_module.prepare_turn = _timed("2 prepare_turn (commit 1)", turn_module.prepare_turn)  # type: ignore[assignment]
    LLMClient.open_reply = _timed("3 upstream: open until first text", LLMClient.open_reply)  # type: ignore[method-assign,assignment]
    LLMClient.open_stream = _timed("3a upstream: SDK create() until headers", LLMClient.open_stream)  # type: ignore[method-assign,assignment]
    turn_module._store = _timed("5 save the turn (commit 2)", turn_module._store)  # type: ignore[assignment]
    after_turn_module.run_extraction = _own_task("extract-inline", after_turn_module.run_extraction)  # type: ignore[attr-defined,assignment]
    run_write = Database.run_write

    @functools.wraps(run_write)  # type: ignore[arg-type]
    async def attributed(self: Database, *args: Any, **kwargs: Any) -> Any:
        token = _thread_phase.set(_phase())
        try:
            return await run_write(self, *args, **kwargs)
        finally:
            _thread_phase.reset(token)

    Database.run_write = attributed  # type: ignore[method-assign]


def _own_task(name: str, fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """Run fn in a task of its own, named for the phase its SQL belongs to (it is awaited at once)."""

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        return await asyncio.create_task(fn(*args, **kwargs), name=f"{name}-{id(args)}")  # type: ignore[arg-type]

    return wrapper


class ChatTimer:
    """Pure ASGI: server-side time to the first body byte and to the end of /api/chat."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] != "/api/chat":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        _request_started.set(started)
        first = True

        async def timed_send(message: Any) -> None:
            nonlocal first
            if message["type"] == "http.response.body":
                if first and message.get("body"):
                    first = False
                    _timings["0 server: to first body byte"].append(time.perf_counter() - started)
                if not message.get("more_body", False):
                    _timings["0 server: to end of body"].append(time.perf_counter() - started)
            await send(message)

        await self.app(scope, receive, timed_send)


def _phase() -> str:
    try:
        task = asyncio.current_task()
    except RuntimeError:
        return _thread_phase.get()
    name = task.get_name() if task is not None else ""
    if name.startswith("extract-inline"):
        return "extractionInline"
    if name.startswith(("extract-", "after-turn-")):
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
    conn.info.setdefault("memchat_bench_started", []).append(time.perf_counter())
    _counts[phase]["statements"] += 1
    if head.startswith("BEGIN"):
        _counts[phase]["begins"] += 1
    elif head in ("SELECT", "INSERT", "UPDATE", "DELETE"):
        _counts[phase][head.lower() + "s"] += 1
    _statements[phase][_shape(statement)] += 1


@event.listens_for(Engine, "after_cursor_execute")
def _after_statement(
    conn: Connection, _cursor: Any, _statement: str, _parameters: Any, _context: Any, _executemany: bool
) -> None:
    started = conn.info.get("memchat_bench_started")
    if started:
        _timings[f"sql wall time per statement ({_phase()})"].append(time.perf_counter() - started.pop())


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
                "timings": {name: summary_ms(values) for name, values in sorted(_timings.items())},
            }
        )

    async def reset(_request: Request) -> Response:
        for p in PHASES:
            _counts[p].clear()
            _statements[p].clear()
        _timings.clear()
        return JSONResponse({"reset": True})

    async def idle(request: Request) -> Response:
        state = request.app.state.memchat
        return JSONResponse(len(state.background) == 0)  # relays are background tasks

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
    parser.add_argument("--variant", choices=sorted(VARIANTS), help="an experimental hot path from bench.variants")
    args = parser.parse_args()
    variants.apply(args.variant)
    settings = Settings()
    settings.database.migrate_on_start = True
    install_timers()
    app = create_app(settings)
    install_probe_routes(app)
    app.add_middleware(ChatTimer)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", proxy_headers=False)


if __name__ == "__main__":
    main()
