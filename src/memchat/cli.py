"""memchat serve | migrate | user create | token | openapi."""

import asyncio
import json
import logging
import os
from collections.abc import Coroutine
from typing import Annotated, Any, TypeVar

import typer

from memchat.settings import Settings

T = TypeVar("T")

cli = typer.Typer(help="memchat: a chat-agent server with history, summary and long-term memory.", no_args_is_help=True)
user_cli = typer.Typer(help="Manage users.", no_args_is_help=True)
cli.add_typer(user_cli, name="user")


def _run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


@cli.command()
def serve(
    host: Annotated[str, typer.Option(help="interface to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port to bind")] = 8000,
    migrate: Annotated[bool | None, typer.Option(help="migrate on start (default: yes for SQLite)")] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level")] = "info",
    workers: Annotated[
        int, typer.Option(min=1, help="worker processes: more than one needs PostgreSQL and MEMCHAT_REDIS_URL")
    ] = 1,
) -> None:
    """Run the HTTP server."""
    import uvicorn

    from memchat.app import create_app

    settings = Settings()
    settings.database.migrate_on_start = settings.database.is_sqlite if migrate is None else migrate
    if workers > 1:
        problem = several_processes_problem(settings)
        if problem is not None:
            typer.echo(f"memchat: {problem}", err=True)
            raise typer.Exit(2)
    if not settings.llm.base_url:
        from memchat.llm import local

        if local.local_extra_installed(settings.local.model_path) and settings.local.model_path is None:
            typer.echo(local.DEMO_MODEL_NOTICE, err=True)
    typer.echo(f"memchat on http://{host}:{port}/  (API docs: http://{host}:{port}/docs)", err=True)
    options: dict[str, Any] = {"host": host, "port": port, "log_level": log_level, "proxy_headers": False}
    if workers == 1:
        uvicorn.run(create_app(settings), **options)
        return
    if settings.database.migrate_on_start:
        migrate_database()  # once, here, not in every worker at the same time
    os.environ["MEMCHAT_MIGRATE_ON_START"] = "false"
    # each worker builds its app from the environment (create_app() reads Settings())
    uvicorn.run("memchat.app:create_app", factory=True, workers=workers, **options)


def several_processes_problem(settings: Settings) -> str | None:
    """Why this configuration cannot run as several processes, or None."""
    if settings.database.is_sqlite:
        return "SQLite has one writer: run one worker, or use PostgreSQL (MEMCHAT_DATABASE_URL) for more"
    if not settings.database.redis_url:
        return (
            "several workers share the chat rate limit and the login throttle through Redis: "
            "set MEMCHAT_REDIS_URL (or run one worker)"
        )
    return None


@cli.command()
def migrate() -> None:
    """Bring the database schema up to date."""
    migrate_database()
    typer.echo("database is up to date")


def migrate_database() -> None:
    from memchat.db.engine import create_database
    from memchat.db.migrate import upgrade

    async def _migrate() -> None:
        db = create_database(Settings().database)
        try:
            await upgrade(db.engine)
        finally:
            await db.dispose()

    _run(_migrate())


async def _with_session(fn: Any) -> Any:
    from memchat.db.engine import create_database
    from memchat.db.migrate import is_up_to_date

    settings = Settings()
    db = create_database(settings.database)
    try:
        if not await is_up_to_date(db.engine):
            raise typer.BadParameter("the database is not migrated: run `memchat migrate` first")
        async with db.write() as session:
            return await fn(settings, session)
    finally:
        await db.dispose()


@user_cli.command("create")
def user_create(
    email: str,
    password: Annotated[str, typer.Option(prompt=True, hide_input=True, confirmation_prompt=True)],
    display_name: Annotated[str | None, typer.Option()] = None,
) -> None:
    """Create a user."""
    from memchat.auth.service import create_user

    async def _create(_settings: Settings, session: Any) -> str:
        user = await create_user(session, email=email, password=password, display_name=display_name)
        return user.id

    typer.echo(_run(_with_session(_create)))


@cli.command()
def token(email: str) -> None:
    """Print a bearer token for a user (for scripts and curl)."""
    from memchat.auth.repository import get_user_by_email
    from memchat.auth.service import normalize_email
    from memchat.security import TokenCodec, resolve_jwt_secret

    async def _token(settings: Settings, session: Any) -> str:
        user = await get_user_by_email(session, normalize_email(email))
        if user is None:
            raise typer.BadParameter(f"no user {email}")
        return TokenCodec(resolve_jwt_secret(settings.auth, settings.database.data_dir), settings.auth.ttl_s).issue(
            user.id
        )

    typer.echo(_run(_with_session(_token)))


@cli.command()
def openapi() -> None:
    """Print the OpenAPI document (the web console's types are generated from it)."""
    from memchat.app import create_app

    typer.echo(json.dumps(create_app(Settings()).openapi(), ensure_ascii=False, indent=2, sort_keys=True))


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("httpx", "httpcore", "httpx2", "httpcore2", "openai"):  # a line per upstream request
        logging.getLogger(noisy).setLevel(logging.WARNING)
    cli()
