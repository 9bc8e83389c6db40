"""Alembic, driven from code: `memchat migrate`, the start-up check and the tests all come here."""

import asyncio
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def alembic_config(database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return config


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()


async def current_revision(engine: AsyncEngine) -> str | None:
    def _read(conn: Connection) -> str | None:
        return MigrationContext.configure(conn).get_current_revision()

    async with engine.connect() as conn:
        return await conn.run_sync(_read)


async def is_up_to_date(engine: AsyncEngine) -> bool:
    return await current_revision(engine) == head_revision()


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    """Run the migrations on an existing engine (its dialect, its pragmas, its schema path)."""

    def _run(conn: Connection) -> None:
        config = alembic_config(str(engine.url))
        config.attributes["connection"] = conn
        command.upgrade(config, revision)

    async with engine.begin() as conn:
        await conn.run_sync(_run)


def upgrade_sync(engine: AsyncEngine) -> None:
    asyncio.run(upgrade(engine))
