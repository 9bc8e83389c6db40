"""The HTTP server under `memchat serve`: uvicorn (the default) or granian, one app either way.

uvicorn runs on uvloop with the httptools parser, named here rather than left to its "auto" pick, so
a venv that lacks either fails at start instead of quietly serving on the slower pure-Python pair.
granian (a Rust HTTP server) serves the same ASGI app; its workers are always child processes, so
the app is built in each from the environment, as uvicorn's are when there is more than one.
"""

import gc
import os
from collections.abc import Callable
from typing import Any, Literal

from memchat.settings import Settings

ServerKind = Literal["uvicorn", "granian"]
APP_FACTORY = "memchat.app:create_app"


def run_uvicorn(settings: Settings, options: dict[str, Any], workers: int) -> None:
    import uvicorn

    options = dict(options, loop="uvloop", http="httptools")
    if workers == 1:
        from memchat.app import create_app

        uvicorn.run(create_app(settings), **options)
        return
    uvicorn.run(APP_FACTORY, factory=True, workers=workers, **options)


def run_granian(options: dict[str, Any], workers: int) -> None:
    from granian import Granian
    from granian.constants import HTTPModes, Interfaces, Loops
    from granian.log import LogLevels

    Granian(
        APP_FACTORY,
        factory=True,
        address=options["host"],
        port=options["port"],
        interface=Interfaces.ASGI,
        workers=workers,
        loop=Loops.uvloop,
        http=HTTPModes.http1,
        # granian has no "trace": its most detailed level stands in
        log_level=LogLevels(options["log_level"]) if options["log_level"] != "trace" else LogLevels.debug,
        log_dictconfig=options["log_config"],
    ).serve()


def serve(
    settings: Settings, options: dict[str, Any], *, workers: int, server: ServerKind, migrate: Callable[[], Any]
) -> None:
    """Run the app until stopped. More than one process, or granian, builds the app in each worker:
    the database is migrated here once (when asked) and the workers are told not to.

    memchat.cli.main starts with the cyclic GC off (start-up makes objects that stay): the app's
    lifespan turns it on once started; a process that only supervises workers, here at once."""
    if server == "uvicorn" and workers == 1:
        run_uvicorn(settings, options, workers)
        return
    gc.enable()
    if settings.database.migrate_on_start:
        migrate()  # once, here, not in every worker at the same time
    os.environ["MEMCHAT_MIGRATE_ON_START"] = "false"
    if server == "granian":
        run_granian(options, workers)
    else:
        run_uvicorn(settings, options, workers)
