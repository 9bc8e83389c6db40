"""`memchat serve` as a real subprocess, for tests that kill it or fuzz it from outside."""

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from bench.stats import descendants

from tests.upstream import TestUpstream

# How long a `memchat serve` may take to answer /healthz: generous, as the suite runs several
# workers at once on a small machine (a deadline, not a sleep: a quick start returns at once).
START_DEADLINE_S = 180.0


def redis_url() -> str:
    """The shared Redis at 127.0.0.1:6379, a database number of this pytest-xdist worker's own
    (gw0 -> 1, gw1 -> 2, ...; 0 without xdist), so parallel workers never read each other's keys."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    number = int(worker.removeprefix("gw")) + 1 if worker.startswith("gw") else 0
    return f"redis://127.0.0.1:6379/{number % 16}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Server:
    def __init__(self, env: dict[str, str], port: int, log: Path, args: tuple[str, ...] = ()):
        self.env = env
        self.args = args
        self.port = port
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    async def start(self) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "memchat",
                "serve",
                "--port",
                str(self.port),
                "--no-migrate",
                "--log-level",
                "warning",
                *self.args,
            ],
            env=self.env,
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + START_DEADLINE_S
        async with httpx.AsyncClient(verify=False) as client:  # plain HTTP: no TLS context (tests/conftest.py)
            while time.monotonic() < deadline:  # poll until the port answers (a loaded machine starts slowly)
                if self.process.poll() is not None:
                    raise RuntimeError(self.log.read_text())
                try:
                    if (await client.get(f"{self.url}/healthz", timeout=10)).status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.05)
        raise RuntimeError(f"memchat serve did not come up in {START_DEADLINE_S:.0f} s:\n{self.log.read_text()}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kill(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                # Seen once with `--workers 2 --server granian` on a loaded CI machine: one worker went on
                # serving after SIGTERM and its parent waited on it. Do what a process manager does after
                # its stop timeout, so no server outlives its test, and say so in the test report.
                warnings.warn(f"memchat serve did not stop within 20 s of SIGTERM ({self.log}); killed", stacklevel=2)
                for pid in descendants(self.process.pid):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                self.process.kill()
                self.process.wait(timeout=10)


def server_env(database_url: str, upstream: TestUpstream, tmp_path: Path, **extra: str) -> dict[str, str]:
    """What a `memchat serve` of the tests runs with: the test database and upstream, no rate limit."""
    return {
        **os.environ,
        "MEMCHAT_DATABASE_URL": database_url,
        "MEMCHAT_LLM_BASE_URL": upstream.base_url,
        "MEMCHAT_LLM_MAX_RETRIES": "0",
        "MEMCHAT_JWT_SECRET": "subprocess-test-secret-0123456789abcdef",
        "MEMCHAT_DATA_DIR": str(tmp_path / "data"),
        "MEMCHAT_CHAT_RATE_LIMIT_PER_MINUTE": "0",
        # a full collection at each start costs CPU that parallel test workers share (tests/test_gc_freeze.py)
        "MEMCHAT_GC_FREEZE_ON_START": "false",
        # a killed instance's turns are found interrupted within this (tests need not wait 15 s)
        "MEMCHAT_TURN_LEASE_S": "2",
        **extra,
    }


@pytest.fixture
async def server(database_url: str, upstream: TestUpstream, tmp_path: Path) -> AsyncIterator[Server]:
    """`memchat serve` on a free port over the test database and the test upstream."""
    env = server_env(database_url, upstream, tmp_path)
    running = Server(env, free_port(), tmp_path / "server.log")
    await running.start()
    yield running
    running.stop()
