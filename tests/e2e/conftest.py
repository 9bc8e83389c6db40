"""End-to-end fixtures: the test upstream and a real `memchat serve` as subprocesses, Chromium via Playwright.

The console must be built first (`cd web && npm ci && npm run build`); without web/dist the
e2e tests are skipped. Screenshots of each page go to $MEMCHAT_E2E_SCREENSHOTS when it is set
(the README's images are made with MEMCHAT_E2E_SCREENSHOTS=docs/screenshots).
"""

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "web" / "dist"
CHROMIUM = os.environ.get("MEMCHAT_E2E_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Deadlines, generous because the suite runs several workers at once on a small machine; each wait
# returns as soon as its condition holds.
START_TIMEOUT_S = 180.0
ACTION_TIMEOUT_MS = 30_000
EXPECT_TIMEOUT_MS = 20_000
PASSWORD = "e2e-password-123"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_until_up(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Polls a readiness URL while the process is alive (start-up, not test synchronisation)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}:\n{log.read_text()}")
        try:
            # a busy machine answers slowly; verify=False: plain HTTP, no TLS context (~30 ms of CPU a poll)
            if httpx.get(url, timeout=10.0, verify=False).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up in {START_TIMEOUT_S}s:\n{log.read_text()}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@dataclass
class Upstream:
    """The standalone test upstream, driven over its control endpoints."""

    base_url: str
    control_url: str

    def script(self, *replies: dict[str, Any]) -> None:
        httpx.post(f"{self.control_url}/script", json=list(replies), timeout=5, verify=False).raise_for_status()

    def release(self) -> None:
        httpx.post(f"{self.control_url}/release", timeout=5, verify=False).raise_for_status()

    def reset(self) -> None:
        httpx.post(f"{self.control_url}/reset", timeout=5, verify=False).raise_for_status()

    def requests(self) -> list[dict[str, Any]]:
        response = httpx.get(f"{self.control_url}/requests", timeout=5, verify=False)
        response.raise_for_status()
        body: list[dict[str, Any]] = response.json()
        return body


@dataclass
class Server:
    base_url: str

    def api(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=10, verify=False)


@pytest.fixture(scope="package")
def e2e_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("e2e")


@pytest.fixture(scope="package")
def upstream(e2e_dir: Path) -> Iterator[Upstream]:
    port = _free_port()
    log = e2e_dir / "upstream.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.upstream", "--port", str(port)],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    control = f"http://127.0.0.1:{port}/_control"
    try:
        _wait_until_up(f"{control}/requests", process, log)
        yield Upstream(base_url=f"http://127.0.0.1:{port}/v1", control_url=control)
    finally:
        _stop(process)


@contextmanager
def serve_memchat(data: Path, env: dict[str, str]) -> Iterator[str]:
    """`memchat serve` on a SQLite database in `data` with the built console, `env` on top of this
    environment (MEMCHAT_LLM_* settings of the environment left out); yields its base URL."""
    if not (DIST / "index.html").is_file():
        pytest.skip("web/dist is missing: build the console with `cd web && npm ci && npm run build`")
    memchat = shutil.which("memchat", path=str(Path(sys.executable).parent)) or "memchat"
    data.mkdir(parents=True, exist_ok=True)
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCHAT_LLM_")}
    full_env.update(
        {
            "MEMCHAT_DATA_DIR": str(data),
            "MEMCHAT_DATABASE_URL": f"sqlite+aiosqlite:///{data / 'memchat.sqlite3'}",
            "MEMCHAT_JWT_SECRET": uuid.uuid4().hex,
            "MEMCHAT_WEB_DIST_DIR": str(DIST),
            "MEMCHAT_CHAT_RATE_LIMIT_PER_MINUTE": "0",
            # a full collection at each start costs CPU that parallel test workers share (tests/test_gc_freeze.py)
            "MEMCHAT_GC_FREEZE_ON_START": "false",
            **env,
        }
    )
    port = _free_port()
    log = data / "server.log"
    with log.open("wb") as out:
        # cwd is the temp folder so that a developer's ./.env cannot change the test server.
        process = subprocess.Popen(
            [memchat, "serve", "--port", str(port), "--log-level", "warning"],
            cwd=data,
            env=full_env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base_url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(f"{base_url}/healthz", process, log)
        yield base_url
    finally:
        _stop(process)


def upstream_env(upstream: Upstream) -> dict[str, str]:
    return {
        "MEMCHAT_LLM_BASE_URL": upstream.base_url,
        "MEMCHAT_LLM_API_KEY": "e2e",
        "MEMCHAT_LLM_MODEL": "test",
        # A scripted failure must reach the browser, not be retried away.
        "MEMCHAT_LLM_MAX_RETRIES": "0",
    }


@pytest.fixture(scope="package")
def server(e2e_dir: Path, upstream: Upstream) -> Iterator[Server]:
    with serve_memchat(e2e_dir / "data", upstream_env(upstream)) as base_url:
        yield Server(base_url=base_url)


# Package scope, not session: sync Playwright keeps an event loop running in this thread until it
# stops, which would break every later test that runs an event loop of its own.
@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"{CHROMIUM} is missing: apt-get install -y chromium")
    with sync_api.sync_playwright() as playwright:
        # generous waits for what a page shows: several test workers share a small machine
        sync_api.expect.set_options(timeout=EXPECT_TIMEOUT_MS)
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser: Any, server: Server, upstream: Upstream) -> Iterator[Any]:
    upstream.reset()
    context = browser.new_context(base_url=server.base_url, viewport={"width": 1280, "height": 800}, locale="zh-CN")
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    page = context.new_page()
    try:
        yield page
    finally:
        context.close()


@dataclass
class Account:
    email: str
    token: str


@pytest.fixture
def account(server: Server) -> Account:
    """A fresh user made through the API, for tests that don't exercise sign-up themselves."""
    email = f"e2e-{uuid.uuid4().hex[:10]}@example.com"
    with server.api() as api:
        response = api.post("/api/auth/signup", json={"email": email, "password": PASSWORD})
        response.raise_for_status()
        return Account(email=email, token=response.json()["token"])


@pytest.fixture
def logged_in(page: Any, account: Account) -> Any:
    """The page with the account's token in localStorage, as after a login."""
    page.goto("/login")
    page.evaluate("token => localStorage.setItem('memchat.token', token)", account.token)
    return page


class Screenshots:
    def __init__(self, folder: Path | None):
        self.folder = folder

    def take(self, page: Any, name: str) -> None:
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(self.folder / f"{name}.png"))


@pytest.fixture(scope="package")
def screenshots() -> Screenshots:
    folder = os.environ.get("MEMCHAT_E2E_SCREENSHOTS")
    return Screenshots((ROOT / folder) if folder else None)
