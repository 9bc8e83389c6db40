"""The HTTP server under `memchat serve`: uvicorn (the default) or granian, one app either way.

uvicorn runs on uvloop with the httptools parser, named here rather than left to its "auto" pick, so
a venv that lacks either fails at start instead of quietly serving on the slower pure-Python pair.
granian (a Rust HTTP server) serves the same ASGI app; its workers are always child processes, so
the app is built in each from the environment, as uvicorn's are when there is more than one.
"""

import gc
import logging
import os
from collections.abc import Callable, MutableMapping
from typing import Any, Literal

from memchat.settings import Settings

ServerKind = Literal["uvicorn", "granian"]
APP_FACTORY = "memchat.app:create_app"

log = logging.getLogger("memchat.serving")


def share_cores(env: MutableMapping[str, str], workers: int, cores: int) -> None:
    """Give each worker's embedding model its share of the cores (OpenMP threads), unless
    OMP_NUM_THREADS is set already.

    Each worker loads its own model, and OpenMP starts one thread per core in each: N workers ran
    N x cores threads, which spin while they wait for each other. Measured with two workers on 2
    cores (PostgreSQL, the default profile, `bench/results/ab-workers-standard-postgresql-2.md`):
    4.5x the CPU per turn, and the after-turn work took 110 s to drain after a 5 s window; with one
    thread each, the same CPU per turn as one worker."""
    if workers > 1 and "OMP_NUM_THREADS" not in env:
        env["OMP_NUM_THREADS"] = str(max(1, cores // workers))
        log.info("%d workers on %d cores: %s OpenMP thread(s) each", workers, cores, env["OMP_NUM_THREADS"])


def run_uvicorn(settings: Settings, options: dict[str, Any], workers: int) -> None:
    import uvicorn

    options = dict(options, loop="uvloop", http="httptools")
    if workers == 1:
        from memchat.app import create_app

        uvicorn.run(create_app(settings), **options)
        return
    uvicorn.run(APP_FACTORY, factory=True, workers=workers, **options)


def run_granian(options: dict[str, Any], workers: int, stop_timeout_s: int) -> None:
    """granian's supervisor waits on a stopping worker with no limit unless told one. A worker was seen
    to go on serving after SIGTERM, inside granian's own serve loop, and its parent then waited on it
    for good: past `stop_timeout_s` (the app's 30 s background drain and its closing, with room) the
    worker is killed, as a process manager would kill the whole server."""
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
        workers_kill_timeout=stop_timeout_s,
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
    share_cores(os.environ, workers, len(os.sched_getaffinity(0)))
    if settings.database.migrate_on_start:
        migrate()  # once, here, not in every worker at the same time
    os.environ["MEMCHAT_MIGRATE_ON_START"] = "false"
    if server == "granian":
        run_granian(options, workers, settings.http.worker_stop_timeout_s)
    else:
        run_uvicorn(settings, options, workers)
