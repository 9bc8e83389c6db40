"""memchat serve | migrate | user create/list/delete/passwd | token | openapi.

Output: what a command is for on stdout (a token, the user list, a one-line report), everything else
on stderr; a failure is one line, `error: ...`, and exit code 1.
"""

import asyncio
import errno
import gc
import json
import logging
import socket
import sys
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer
from pydantic import ValidationError

from memchat.settings import Settings

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

T = TypeVar("T")

cli = typer.Typer(help="memchat: a chat-agent server with history, summary and long-term memory.", no_args_is_help=True)
user_cli = typer.Typer(help="Manage users.", no_args_is_help=True)
cli.add_typer(user_cli, name="user")

PasswordOption = Annotated[
    str | None,
    typer.Option(help="the password; visible to other processes and in shell history, so prefer the prompt"),
]
PasswordStdin = Annotated[
    bool, typer.Option("--password-stdin", help="read the password from the first line of standard input")
]


class CommandFailed(Exception):
    """Ends the command with `error: <message>` and exit code 1."""


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(1)


@cli.callback()
def _options(
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="also log the migrations' INFO lines")] = False,
) -> None:
    # Alembic logs every migration context at INFO ("Context impl SQLiteImpl." on each check).
    logging.getLogger("alembic").setLevel(logging.INFO if verbose else logging.WARNING)


def _run(work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Runs an async command; the failures a user can fix are one line, not a traceback."""
    from sqlalchemy.exc import DBAPIError

    from memchat.errors import MemchatError

    try:
        return asyncio.run(work())
    except (CommandFailed, MemchatError) as exc:
        _fail(str(exc))
    except DBAPIError as exc:
        _fail(f"database error: {str(exc.orig).strip().splitlines()[0]}")
    except OSError as exc:
        _fail(f"cannot reach the database: {exc}")


async def _in_session(work: "Callable[[Settings, AsyncSession], Awaitable[T]]", *, write: bool) -> T:
    from memchat.db.engine import create_database
    from memchat.db.migrate import is_up_to_date

    settings = Settings()
    db = create_database(settings.database)
    try:
        if not await is_up_to_date(db.engine):
            raise CommandFailed("the database is not migrated: run `memchat migrate` first")
        async with db.write() if write else db.read() as session:
            return await work(settings, session)
    finally:
        await db.dispose()


def _invalid(exc: ValidationError) -> str:
    """A validation error as one line: `password: String should have at least 8 characters`."""
    parts = []
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"])
        message = "is not an email address" if error["type"] == "string_pattern_mismatch" else error["msg"]
        parts.append(f"{field}: {message}")
    return "; ".join(parts)


def _password(password: str | None, from_stdin: bool) -> str:
    if from_stdin:
        if password is not None:
            _fail("give --password or --password-stdin, not both")
        return sys.stdin.readline().removesuffix("\n").removesuffix("\r")
    if password is not None:
        return password
    entered: str = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    return entered


@cli.command()
def serve(
    host: Annotated[str, typer.Option(envvar="MEMCHAT_HOST", help="interface to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option(envvar="MEMCHAT_PORT", help="port to bind")] = 8000,
    migrate: Annotated[bool | None, typer.Option(help="migrate on start (default: yes for SQLite)")] = None,
    log_level: Annotated[
        str, typer.Option(help="uvicorn log level: critical, error, warning, info, debug, trace")
    ] = "info",
    workers: Annotated[
        int, typer.Option(min=1, help="worker processes: more than one needs PostgreSQL and MEMCHAT_REDIS_URL")
    ] = 1,
    server: Annotated[
        str, typer.Option(envvar="MEMCHAT_SERVER", help="HTTP server: uvicorn (uvloop + httptools) or granian")
    ] = "uvicorn",
) -> None:
    """Run the HTTP server."""
    from memchat.serving import ServerKind
    from memchat.serving import serve as run_server

    if server not in ("uvicorn", "granian"):
        _fail(f"--server is uvicorn or granian, not {server!r}")
    settings = Settings()
    if workers > 1 and settings.observability.metrics:
        # before anything imports prometheus_client: every worker writes its values there
        from memchat.observability.workers import prepare_metrics_dir

        prepare_metrics_dir()
    from memchat.observability.logs import log_config

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
    taken = port_taken(host, port)
    if taken is not None:
        _fail(taken)
    typer.echo(f"memchat on http://{host}:{port}/  (API docs: http://{host}:{port}/docs)", err=True)
    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": log_level,
        "log_config": log_config(settings.observability.log_format, log_level),
        "proxy_headers": False,
    }
    kind: ServerKind = "granian" if server == "granian" else "uvicorn"
    run_server(settings, options, workers=workers, server=kind, migrate=migrate_database)


def port_taken(host: str, port: int) -> str | None:
    """Why the server cannot listen on host:port, said plainly before the start-up banner, or None.
    A bind and close, the way uvicorn binds (SO_REUSEADDR), so a port in TIME_WAIT is not refused."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        return f"cannot listen on {host}: {exc.strerror}. Pick another with --host or MEMCHAT_HOST."
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                return f"cannot listen on {host}:{port}: {exc.strerror}."
            return (
                f"port {port} on {host} is already in use (another memchat, or another program). "
                f"Pick another: memchat serve --port {port + 1}, or MEMCHAT_PORT={port + 1} make run."
            )
    return None


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
    before, after = migrate_database()
    if before == after:
        typer.echo(f"the database is up to date (revision {after})")
    else:
        typer.echo(
            f"migrated the database from revision {before} to {after}"
            if before
            else f"migrated the empty database to revision {after}"
        )


def migrate_database() -> tuple[str | None, str | None]:
    """Upgrade the schema; the revisions before and after."""
    from memchat.db.engine import create_database
    from memchat.db.migrate import current_revision, upgrade

    async def _migrate() -> tuple[str | None, str | None]:
        db = create_database(Settings().database)
        try:
            before = await current_revision(db.engine)
            await upgrade(db.engine)
            return before, await current_revision(db.engine)
        finally:
            await db.dispose()

    return _run(_migrate)


@user_cli.command("create")
def user_create(
    email: str,
    password: PasswordOption = None,
    password_stdin: PasswordStdin = False,
    display_name: Annotated[str | None, typer.Option(help="the name the console shows")] = None,
) -> None:
    """Create a user; the email and password are checked as sign-up checks them."""
    from memchat.auth.schemas import SignupRequest
    from memchat.auth.service import create_user
    from memchat.security import Passwords

    secret = _password(password, password_stdin)
    try:
        body = SignupRequest.model_validate({"email": email, "password": secret, "display_name": display_name})
    except ValidationError as exc:
        _fail(_invalid(exc))

    async def _create(settings: Settings, session: "AsyncSession") -> tuple[str, str]:
        passwords = Passwords(settings.password_hash)
        user = await create_user(
            session, passwords, email=body.email, password=body.password, display_name=body.display_name
        )
        return user.email, user.id

    created_email, user_id = _run(lambda: _in_session(_create, write=True))
    typer.echo(f"created user {created_email} (id {user_id})")


@user_cli.command("list")
def user_list() -> None:
    """List the users, oldest first: email, id, created (UTC), display name; tab-separated."""
    from memchat.auth.repository import list_users

    async def _list(_settings: Settings, session: "AsyncSession") -> list[tuple[str, str, int, str | None]]:
        return [(u.email, u.id, u.created_at_ms, u.display_name) for u in await list_users(session)]

    users = _run(lambda: _in_session(_list, write=False))
    for email, user_id, created_at_ms, display_name in users:
        created = datetime.fromtimestamp(created_at_ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        typer.echo(f"{email}\t{user_id}\t{created}\t{display_name or ''}")
    if not users:
        typer.echo("no users", err=True)


@user_cli.command("delete")
def user_delete(
    email: str, yes: Annotated[bool, typer.Option("--yes", "-y", help="do not ask for confirmation")] = False
) -> None:
    """Delete a user and everything of theirs: agents, conversations, messages, memories."""
    from memchat.auth import repository
    from memchat.auth.service import delete_user, normalize_email

    async def _find(_settings: Settings, session: "AsyncSession") -> tuple[str, repository.AccountSize]:
        user = await repository.get_user_by_email(session, normalize_email(email))
        if user is None:
            raise CommandFailed(f"no user {email}")
        return user.id, await repository.account_size(session, user.id)

    user_id, size = _run(lambda: _in_session(_find, write=False))
    what = ", ".join(
        f"{n} {one if n == 1 else many}"
        for n, one, many in [
            (size.agents, "agent", "agents"),
            (size.conversations, "conversation", "conversations"),
            (size.messages, "message", "messages"),
            (size.memories, "memory", "memories"),
        ]
    )
    if not yes:
        typer.confirm(f"Delete {email} and all of theirs ({what})?", abort=True, err=True)

    async def _delete(_settings: Settings, session: "AsyncSession") -> None:
        await delete_user(session, user_id)

    _run(lambda: _in_session(_delete, write=True))
    typer.echo(f"deleted user {email} and all of theirs ({what})")


@user_cli.command("passwd")
def user_passwd(email: str, password: PasswordOption = None, password_stdin: PasswordStdin = False) -> None:
    """Set a user's password (checked as sign-up checks it). Login tokens issued before are refused
    from then on; API keys stay."""
    from memchat.auth.repository import get_user_by_email
    from memchat.auth.schemas import PasswordReset
    from memchat.auth.service import normalize_email, set_password
    from memchat.security import Passwords

    secret = _password(password, password_stdin)
    try:
        body = PasswordReset.model_validate({"password": secret})
    except ValidationError as exc:
        _fail(_invalid(exc))

    async def _passwd(settings: Settings, session: "AsyncSession") -> None:
        user = await get_user_by_email(session, normalize_email(email))
        if user is None:
            raise CommandFailed(f"no user {email}")
        await set_password(session, Passwords(settings.password_hash), user.id, body.password)

    _run(lambda: _in_session(_passwd, write=True))
    typer.echo(f"changed the password of {email}; its earlier login tokens are refused from now on")


@cli.command()
def token(email: str) -> None:
    """Print a bearer token for a user (for scripts and curl): the token alone, on stdout."""
    from memchat.auth.repository import get_user_by_email
    from memchat.auth.service import normalize_email
    from memchat.security import TokenCodec, resolve_jwt_secret

    async def _token(settings: Settings, session: "AsyncSession") -> str:
        user = await get_user_by_email(session, normalize_email(email))
        if user is None:
            raise CommandFailed(f"no user {email}")
        secret = resolve_jwt_secret(settings.auth, settings.database.data_dir)
        return TokenCodec(secret, settings.auth.ttl_s, settings.auth.algorithm).issue(user.id)

    typer.echo(_run(lambda: _in_session(_token, write=False)))


@cli.command()
def openapi() -> None:
    """Print the OpenAPI document (the web console's types are generated from it)."""
    from memchat.app import create_app

    typer.echo(json.dumps(create_app(Settings()).openapi(), ensure_ascii=False, indent=2, sort_keys=True))


def main() -> None:
    # A start makes ~150,000 objects that live as long as the process (modules, classes, the app,
    # the embedder): the cyclic GC's passes over them while they are being made free nothing and
    # cost ~0.25 s of CPU. Every command but `serve` is short; under `serve` the app's lifespan
    # turns the GC on once the app has started (memchat.app).
    gc.disable()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("httpx", "httpcore", "httpx2", "httpcore2", "openai", "mcp"):  # a line per request
        logging.getLogger(noisy).setLevel(logging.WARNING)
    cli()
