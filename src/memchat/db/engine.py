"""Engines and session factories. SQLite gets WAL, busy_timeout, foreign keys and BEGIN IMMEDIATE writes."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection
from sqlalchemy.engine.url import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from memchat.settings import Settings

_WRITE_OPTION = "memchat_write"


def _install_sqlite_pragmas(engine: AsyncEngine, busy_timeout_ms: int) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take over BEGIN from the driver so that write transactions can say IMMEDIATE.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Connection) -> None:
        # A deferred transaction that reads and then writes can fail with SQLITE_BUSY even with
        # busy_timeout; taking the write lock up front makes writers queue instead.
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(_WRITE_OPTION) else "BEGIN")


@dataclass
class Database:
    engine: AsyncEngine
    read_sessions: async_sessionmaker[AsyncSession]
    write_sessions: async_sessionmaker[AsyncSession]
    is_sqlite: bool
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

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        async with self.read_sessions() as session, session.begin():
            yield session

    async def dispose(self) -> None:
        await self.engine.dispose()


def create_database(settings: Settings, **engine_kwargs: Any) -> Database:
    url = make_url(settings.resolved_database_url())
    is_sqlite = url.get_backend_name() == "sqlite"
    if is_sqlite and url.database and url.database != ":memory:":
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    kwargs: dict[str, Any] = {"pool_pre_ping": not is_sqlite}
    kwargs.update(engine_kwargs)
    engine = create_async_engine(url, **kwargs)
    if is_sqlite:
        _install_sqlite_pragmas(engine, settings.sqlite_busy_timeout_ms)
    write_engine = engine.execution_options(**{_WRITE_OPTION: True})
    return Database(
        engine=engine,
        read_sessions=async_sessionmaker(engine, expire_on_commit=False),
        write_sessions=async_sessionmaker(write_engine, expire_on_commit=False),
        is_sqlite=is_sqlite,
    )
