"""create_app(settings) -> FastAPI: routers, the one error handler, the lifespan."""

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from pydantic import Field
from redis.asyncio import Redis
from redis.exceptions import RedisError
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse

from memchat import __version__
from memchat.agents.router import router as agents_router
from memchat.api_docs import install_api_docs
from memchat.auth.keys_router import router as keys_router
from memchat.auth.router import router as auth_router
from memchat.background import BackgroundTasks
from memchat.chat.admission import TurnAdmission
from memchat.chat.leases import recover_unfinished_turns, watch_leases
from memchat.chat.router import router as chat_router
from memchat.chat.services import ChatServices
from memchat.chat.shared_streams import REDIS_UNAVAILABLE, RedisTurnStreams, connect_redis
from memchat.chat.streams import LocalTurnStreams
from memchat.clock import now_ms
from memchat.conversations.router import router as conversations_router
from memchat.db.engine import Database, create_database
from memchat.db.errors import is_busy, is_unavailable
from memchat.db.migrate import is_up_to_date, upgrade
from memchat.errors import MemchatError
from memchat.files.router import router as files_router
from memchat.imports.router import router as imports_router
from memchat.instances import SharedStateRequired, register_instance, unregister_instance
from memchat.limits.guards import BodySizeLimit
from memchat.limits.shared import FallbackLoginThrottle, FallbackRateLimiter
from memchat.limits.throttle import LoginGuard, LoginThrottle, RateLimiter
from memchat.llm.client import LLMClient
from memchat.llm.local import LocalModelServer
from memchat.llm.setup import build_llm
from memchat.mcp_tools.endpoint import MCP_REQUEST_HEADERS, McpEndpoint
from memchat.mcp_tools.parts import McpParts
from memchat.memories.extraction.pipeline import MemoryPipeline
from memchat.memories.language.semantic import MemoryEmbeddings, build_memory_embeddings
from memchat.memories.router import router as memories_router
from memchat.observability import metrics, tracing
from memchat.observability.http import RequestObservation
from memchat.observability.logs import request_id
from memchat.observability.loop import watch_event_loop
from memchat.observability.pool import watch_pool
from memchat.observability.routes import install_metrics_route
from memchat.openai_compat.errors import install_openai_error_shape
from memchat.openai_compat.router import router as openai_router
from memchat.probes import model_problem, storage_problem
from memchat.schemas import CamelModel
from memchat.security import Passwords, TokenCodec, resolve_jwt_secret
from memchat.settings import Settings
from memchat.web import default_dist_dir, mount_console

log = logging.getLogger("memchat")


@dataclass
class AppState:
    """What the running app holds, built once in the lifespan: the one holder of its parts. Routes
    reach a part through memchat.deps (by name, typed by the part) and the chat turn through its own
    part, ChatServices, so that no domain package imports the whole."""

    settings: Settings
    db: Database
    tokens: TokenCodec
    passwords: Passwords
    login_throttle: LoginGuard
    background: BackgroundTasks
    chat: ChatServices
    # The embedded model server when no upstream URL is configured.
    local_model: LocalModelServer | None = None
    # Redis (MEMCHAT_REDIS_URL) for /healthz; its users hold their own reference.
    redis: Redis | None = None

    @property
    def memory_embeddings(self) -> MemoryEmbeddings | None:
        """The embedder memories use (None without one): the memory routes embed what users write."""
        return self.chat.memory.embeddings


# a stop waits for the reply to be stored: the save deadline and this much more
STOP_WAIT_MARGIN_S = 5.0


class Health(CamelModel):
    status: str
    database: str
    llm: str
    images: bool = Field(description="the model is sent the pictures of a message (MEMCHAT_LLM_IMAGES)")


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    error: dict[str, str] = {"code": code, "message": message}
    if status >= 500:  # what an operator needs to find this failure in the logs and traces
        error["requestId"] = request_id.get()
        if (trace_id := tracing.current_trace_id()) is not None:
            error["traceId"] = trace_id
        # the handler of an unhandled error answers outside every middleware: the id goes on here
        headers = {**(headers or {}), "X-Request-ID": error["requestId"]}
    return JSONResponse({"error": error}, status_code=status, headers=headers)


def _validation_message(exc: RequestValidationError) -> tuple[str, str]:
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return "malformed_json", "the request body is not valid JSON"
    parts = []
    for e in errors[:5]:
        loc = ".".join(str(p) for p in e.get("loc", ()) if p != "body")
        parts.append(f"{loc}: {e.get('msg', 'invalid')}" if loc else str(e.get("msg", "invalid")))
    return "invalid_input", "; ".join(parts) or "invalid input"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(MemchatError)
    async def _memchat_error(_request: Request, exc: MemchatError) -> JSONResponse:
        if exc.status_code == 429 and metrics.enabled:
            metrics.REFUSALS.labels(exc.code).inc()
        return _error(exc.status_code, exc.code, exc.message, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        code, message = _validation_message(exc)
        return _error(422, code, message)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed", 401: "unauthorized"}.get(exc.status_code, "http_error")
        return _error(exc.status_code, code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(DBAPIError)
    async def _database_error(_request: Request, exc: DBAPIError) -> JSONResponse:
        if is_busy(exc):
            log.warning("database busy: %s", exc.orig)
            return _error(503, "database_busy", "the database is busy; try again", {"Retry-After": "1"})
        if is_unavailable(exc):
            log.error("database unavailable: %s", exc.orig)
            return _error(
                503, "database_unavailable", "the database cannot be reached; try again", {"Retry-After": "1"}
            )
        log.error("database error", exc_info=exc)
        return _error(500, "internal_error", "internal server error")

    @app.exception_handler(RedisError)
    async def _redis_error(_request: Request, exc: RedisError) -> JSONResponse:
        # what has no degraded mode of its own (memchat.chat.shared_streams answers resume and stop)
        log.warning("Redis unavailable: %s", exc)
        if metrics.enabled:
            metrics.REDIS_ERRORS.labels("request").inc()
        return _error(503, REDIS_UNAVAILABLE, "Redis cannot be reached; try again", {"Retry-After": "1"})

    @app.exception_handler(Exception)
    async def _bug(_request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error", exc_info=exc)
        return _error(500, "internal_error", "internal server error")


def build_chat_services(
    settings: Settings,
    db: Database,
    llm: LLMClient,
    embeddings: MemoryEmbeddings | None,
    background: BackgroundTasks,
    shared: Redis | None = None,
) -> ChatServices:
    """The chat turn's parts, the memory strategy resolved once from the settings."""
    per_minute = settings.limits.chat_rate_limit_per_minute
    memory = MemoryPipeline(
        extractor=settings.memory.extractor,
        recall_mode=settings.memory.recall,
        injection_limit=settings.memory.injection_limit,
        recall_char_budget=settings.memory.recall_char_budget,
        recall_timeout_s=settings.memory.recall_timeout_s,
        llm_max_ops=settings.memory.llm_max_ops,
        llm_context_memories=settings.memory.llm_context_memories,
        max_memories=settings.limits.max_memories_per_agent,
        embeddings=embeddings,
        llm=llm,
        changes=settings.memory.changes,
        timezone=settings.memory.timezone,
        stream_wait_s=settings.memory.stream_wait_s,
    )
    return ChatServices(
        db=db,
        llm=llm,
        memory=memory,
        background=background,
        limiter=FallbackRateLimiter(shared, per_minute) if shared is not None else RateLimiter(per_minute),
        limits=settings.limits,
        summary=settings.summary,
        images=settings.llm.images,
        image_history_messages=settings.llm.image_history_messages,
        streams=(
            RedisTurnStreams(
                shared,
                alive_ms=int(settings.limits.turn_lease_s * 1000),
                stop_wait_s=settings.limits.save_deadline_s + STOP_WAIT_MARGIN_S,
            )
            if shared is not None
            else LocalTurnStreams()
        ),
    )


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    mcp = McpEndpoint()
    metrics.set_enabled(settings.observability.metrics)
    tracing.setup_from_environment()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        db = create_database(settings.database)
        if settings.observability.metrics:
            watch_pool(db.engine.sync_engine.pool, "main")
            if db.sqlite_engine is not None:  # SQLite's one writer connection, on its own thread
                watch_pool(db.sqlite_engine.pool, "sqlite_writer")
        if not await is_up_to_date(db.engine):
            if not settings.database.migrate_on_start:
                await db.dispose()
                raise RuntimeError("the database is not migrated: run `memchat migrate` first")
            await upgrade(db.engine)
        llm, local_server = build_llm(settings.llm, settings.local)
        if local_server is not None:
            local_server.start_in_background()
        embeddings = build_memory_embeddings(
            settings.resolved_embeddings_provider, settings.embeddings, settings.memory.duplicate_threshold
        )
        background = BackgroundTasks()
        if embeddings is not None:
            # quick with the shipped vectors and classifiers; seconds when they must be made here
            await embeddings.prepare()
        shared = connect_redis(settings.database.redis_url) if settings.database.redis_url else None
        if shared is not None:
            await shared.ping()  # a wrong URL fails the start, not the first login
        state = AppState(
            settings=settings,
            db=db,
            tokens=TokenCodec(
                resolve_jwt_secret(settings.auth, settings.database.data_dir),
                settings.auth.ttl_s,
                settings.auth.algorithm,
            ),
            passwords=Passwords(settings.password_hash),
            login_throttle=FallbackLoginThrottle(shared) if shared is not None else LoginThrottle(),
            background=background,
            chat=build_chat_services(settings, db, llm, embeddings, background, shared),
            local_model=local_server,
            redis=shared,
        )
        app.state.memchat = state
        if db.engine.dialect.name == "postgresql":
            lease_ms = int(settings.limits.turn_lease_s * 1000)
            chat = state.chat
            try:
                await db.run_write(
                    register_instance, chat.instance_id, shared=shared is not None, now_ms=now_ms(), lease_ms=lease_ms
                )
            except SharedStateRequired as exc:
                log.error("memchat cannot start: %s", exc)
                raise
            except DBAPIError as exc:
                # a database that cannot be written now (read-only, locked) does not keep memchat
                # from starting: /healthz says so; this instance is then not registered
                log.warning("registering this instance failed: %s", exc.orig)
            else:
                chat.registered = True
        try:
            await recover_unfinished_turns(db, state.chat.memory)
        except DBAPIError:
            # A database that cannot be written now (read-only, locked) should not keep memchat
            # from starting: /healthz says so, and recovery runs on the next start.
            log.exception("recovering unfinished turns failed")
        leases = asyncio.create_task(watch_leases(state.chat), name="watch-leases")
        stops = asyncio.create_task(state.chat.streams.run(), name="turn-stops")
        loop_lag = asyncio.create_task(watch_event_loop(), name="event-loop-lag")
        if settings.http.gc_freeze_on_start:
            # What exists now lives as long as the process. Left in the cyclic GC, each full
            # collection walks its ~170,000 objects with the event loop stopped (≈ 115 ms here),
            # and every open stream's next chunk comes that much late (bench figure 4).
            gc.collect()
            gc.freeze()
        # `memchat serve` starts with the cyclic GC off (memchat.cli.main): on, now that the start's
        # long-lived objects are made (a no-op where it was on)
        gc.enable()
        mcp_parts = McpParts(db, state.tokens, background, state.chat.memory, settings.limits.max_memories_per_agent)
        try:
            async with mcp.serving(mcp_parts):
                yield
        finally:
            leases.cancel()
            if state.chat.registered:
                with contextlib.suppress(DBAPIError):
                    await db.run_write(unregister_instance, state.chat.instance_id)
            stops.cancel()
            loop_lag.cancel()
            await state.background.drain()
            await state.chat.llm.aclose()
            if local_server is not None:
                local_server.stop()
            await db.dispose()
            if shared is not None:
                await shared.aclose()
            metrics.process_exited()
            tracing.flush()

    app = FastAPI(
        title="memchat",
        version=__version__,
        summary="Chat-agent server with server-side history, a rolling summary and long-term memory",
        lifespan=lifespan,
        redirect_slashes=False,  # /api/agents/ is an unknown route (404), not a redirect
        docs_url=None,  # install_api_docs: the same pages with their assets served from here
        redoc_url=None,
    )
    install_error_handlers(app)
    install_openai_error_shape(app)  # under /v1, the same handlers answer OpenAI's error shape
    install_api_docs(app)

    @app.get("/healthz", tags=["health"])
    async def healthz(request: Request) -> Any:
        state: AppState = request.app.state.memchat
        if (problem := await storage_problem(state.db, state.redis)) is not None:
            return _error(503, problem.code, problem.message)
        local = state.local_model
        llm = "remote" if local is None else f"local:{local.state}"
        return Health(status="ok", database="ok", llm=llm, images=settings.llm.images)

    @app.get("/livez", tags=["health"])
    async def livez() -> Any:
        """The process answers (restart it when this fails)."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"])
    async def readyz(request: Request) -> Any:
        """This instance can take traffic: the database takes a write in time, Redis answers when
        configured, the embedded model (if any) is ready."""
        state: AppState = request.app.state.memchat
        problem = model_problem(state.local_model) or await storage_problem(state.db, state.redis)
        if problem is not None:
            return _error(503, problem.code, problem.message)
        return {"status": "ok"}

    install_metrics_route(app, settings.observability.metrics, settings.observability.metrics_token)

    for router in (
        auth_router,
        keys_router,
        agents_router,
        conversations_router,
        imports_router,
        files_router,
        memories_router,
        chat_router,
        openai_router,
    ):
        app.include_router(router)
    app.router.routes.append(mcp.route())
    mount_console(app, settings.http.web_dist_dir or default_dist_dir())

    app.add_middleware(BodySizeLimit, max_bytes=settings.limits.max_request_bytes)
    app.add_middleware(TurnAdmission, limit=settings.limits.chat_setup_concurrency)
    if settings.http.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.http.cors_origins,
            allow_methods=["GET", "POST", "PATCH", "DELETE"],
            # and the MCP client's own headers, for a browser MCP client of /mcp
            allow_headers=["Authorization", "Content-Type", "Idempotency-Key", "X-Request-ID", *MCP_REQUEST_HEADERS],
            expose_headers=["X-Request-ID"],
        )
    app.add_middleware(RequestObservation)  # outermost: every response has its request id
    return app
