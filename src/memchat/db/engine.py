"""Engines and session factories. SQLite gets WAL, busy_timeout, foreign keys and BEGIN IMMEDIATE writes.

Two ways in. REST routes and background jobs use async ORM sessions (`read()`, `write()`). The chat
turn runs each of its two transactions as one synchronous function over SQLAlchemy Core
(`run_write`): on SQLite whole on the database thread, one thread hop per transaction instead of
several per statement (aiosqlite); on PostgreSQL through AsyncConnection.run_sync. The turn's
statements are built once at import, with bind parameters, so a turn pays neither the ORM's unit
of work nor statement construction (bench/PROFILE.md). They live in the repository of the table
they touch, beside its async helpers.
"""

import asyncio
import contextvars
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeAlias, TypeVar

from sqlalchemy import Engine, Row, create_engine, event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.engine.url import URL, make_url
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from memchat.observability import metrics
from memchat.settings import DatabaseSettings

_WRITE_OPTION = "memchat_write"


P = ParamSpec("P")
T = TypeVar("T")

AnyRow: TypeAlias = Row[*tuple[Any, ...]]


def dialect_insert(bind: Connection | str) -> Any:
    """The dialect's INSERT (with ON CONFLICT) for a connection or a dialect name."""
    name = bind if isinstance(bind, str) else bind.dialect.name
    return postgresql.insert if name == "postgresql" else sqlite.insert


def _install_sqlite_pragmas(engine: Engine, busy_timeout_ms: int) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take over BEGIN from the driver so that write transactions can say IMMEDIATE.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()


def _install_sqlite_begin(engine: Engine) -> None:
    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # A deferred transaction that reads and then writes can fail with SQLITE_BUSY even with
        # busy_timeout; taking the write lock up front makes writers queue instead.
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(_WRITE_OPTION) else "BEGIN")


@dataclass
class Database:
    engine: AsyncEngine
    write_engine: AsyncEngine
    read_sessions: async_sessionmaker[AsyncSession]
    write_sessions: async_sessionmaker[AsyncSession]
    is_sqlite: bool
    # SQLite: the turn's write transactions run whole on this engine's one thread (run_write).
    sqlite_engine: Engine | None = None
    sqlite_thread: ThreadPoolExecutor | None = None
    # SQLite has one writer at a time. Queue this process's writers here, in FIFO order, instead
    # of letting them poll the file lock with busy_timeout's growing sleeps (which, under load,
    # ran past the timeout: "database is locked").
    _write_lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncSession]:
        """A write transaction: commits when the block ends, rolls back on error. Not reentrant."""
        if self.is_sqlite:
            async with self._write_lock, self.write_sessions() as session, session.begin():
                yield session
        else:
            async with self.write_sessions() as session, session.begin():
                yield session

    async def run_write(self, work: Callable[Concatenate[Connection, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run `work(conn, ...)` as one write transaction: commits when it returns, rolls back on error.

        SQLite: on the database thread, under the same writer queue as write(), so the whole
        transaction costs one thread hop (aiosqlite hops several times per statement).
        PostgreSQL: through AsyncConnection.run_sync on the asyncpg engine.
        """
        if self.sqlite_engine is not None and self.sqlite_thread is not None:
            engine, context = self.sqlite_engine, contextvars.copy_context()

            def transaction() -> T:
                # BEGIN IMMEDIATE by hand, not through a "begin" listener: any connection event
                # listener makes SQLAlchemy dispatch events around every statement.
                with engine.connect() as connection:
                    connection.exec_driver_sql("BEGIN IMMEDIATE")
                    result = work(connection, *args, **kwargs)
                    connection.commit()
                    return result

            asked = time.perf_counter()
            async with self._write_lock:
                metrics.write_waited(asked)
                return await asyncio.get_running_loop().run_in_executor(self.sqlite_thread, context.run, transaction)
        asked = time.perf_counter()
        async with self.write_engine.begin() as connection:
            metrics.write_waited(asked)
            return await connection.run_sync(work, *args, **kwargs)

    async def check_writable(self) -> None:
        """Take a write transaction and give it back: raises when the database cannot be written
        now (locked past the busy or lock timeout, read-only, unreachable). On PostgreSQL it also
        takes the lock a chat turn's writes take on their tables (ROW EXCLUSIVE, what INSERT and
        UPDATE take; it waits only behind table locks, never behind row locks), so a table locked
        against writes is seen here, not only by the turns that get 503 `database_busy`."""
        await self.run_write(_probe_write)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        async with self.read_sessions() as session, session.begin():
            yield session

    async def dispose(self) -> None:
        await self.engine.dispose()
        if self.sqlite_engine is not None and self.sqlite_thread is not None:
            await asyncio.get_running_loop().run_in_executor(self.sqlite_thread, self.sqlite_engine.dispose)
            self.sqlite_thread.shutdown(wait=True)


class ReadOnlyDatabase(Exception):
    """The database accepts no writes (a read-only transaction default, a standby)."""


def _probe_write(conn: Connection) -> None:
    if conn.dialect.name == "postgresql":
        read_only = conn.exec_driver_sql("SHOW transaction_read_only").scalar()
        if read_only == "on" or conn.exec_driver_sql("SELECT pg_is_in_recovery()").scalar():
            raise ReadOnlyDatabase("the database is read-only")
        conn.exec_driver_sql(f"LOCK TABLE {', '.join(_TURN_TABLES)} IN ROW EXCLUSIVE MODE")


# what a chat turn writes (its two commit points)
_TURN_TABLES = ("agents", "conversations", "messages")


def _sync_sqlite_url(url: URL) -> URL | None:
    """The same file through the stdlib driver; None for an in-memory database (not shared)."""
    if not url.database or url.database == ":memory:" or url.database.startswith("file:"):
        return None
    return url.set(drivername="sqlite+pysqlite")


def _closed_by_the_server(dbapi_connection: Any, record: Any, proxy: Any) -> None:
    """A pooled PostgreSQL connection the server closed (a restart, an idle timeout, a terminated
    backend) is replaced at checkout, the pool trying a fresh one. The check reads the driver's own
    state, so it costs no round trip: SQLAlchemy's pre-ping sends three (BEGIN, a query, ROLLBACK)
    before every transaction, 6 of a turn's 17 on the wire. A connection lost while in use fails its
    statement, and the pool then drops every connection it holds (SQLAlchemy's disconnect handling)."""
    if dbapi_connection.driver_connection.is_closed():
        raise DisconnectionError("the database closed this connection")


def create_database(config: DatabaseSettings, **engine_kwargs: Any) -> Database:
    url = make_url(config.resolved_url())
    is_sqlite = url.get_backend_name() == "sqlite"
    if is_sqlite and url.database and url.database != ":memory:":
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    kwargs: dict[str, Any] = {}
    if not is_sqlite:
        kwargs.update(pool_size=config.pool_size, max_overflow=config.max_overflow)
        # A statement waits at most this long for a lock, then fails as busy (503), as SQLite's
        # busy timeout does; without it a held lock stalls requests and saves indefinitely.
        server_settings = {"lock_timeout": str(config.lock_timeout_ms)}
        # A transaction whose client went silent (an instance frozen between a write and its commit)
        # would hold its row locks for as long as it is frozen; the server ends it instead.
        if config.idle_transaction_timeout_ms:
            server_settings["idle_in_transaction_session_timeout"] = str(config.idle_transaction_timeout_ms)
        kwargs["connect_args"] = {"server_settings": server_settings}
    kwargs.update(engine_kwargs)
    engine = create_async_engine(url, **kwargs)
    if not is_sqlite:
        event.listen(engine.sync_engine, "checkout", _closed_by_the_server)
    sqlite_engine = sqlite_thread = None
    if is_sqlite:
        _install_sqlite_pragmas(engine.sync_engine, config.sqlite_busy_timeout_ms)
        _install_sqlite_begin(engine.sync_engine)
        sync_url = _sync_sqlite_url(url)
        if sync_url is not None:
            # One connection, used only from its one thread.
            sqlite_base = create_engine(sync_url, pool_size=1, max_overflow=0)
            _install_sqlite_pragmas(sqlite_base, config.sqlite_busy_timeout_ms)
            sqlite_engine = sqlite_base.execution_options(**{_WRITE_OPTION: True})
            sqlite_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memchat-sqlite")
    write_engine = engine.execution_options(**{_WRITE_OPTION: True})
    return Database(
        engine=engine,
        write_engine=write_engine,
        read_sessions=async_sessionmaker(engine, expire_on_commit=False),
        write_sessions=async_sessionmaker(write_engine, expire_on_commit=False),
        is_sqlite=is_sqlite,
        sqlite_engine=sqlite_engine,
        sqlite_thread=sqlite_thread,
    )
