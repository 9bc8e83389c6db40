"""One command for the whole benchmark: mock upstream, memchat, the load generator, the report.

    .venv/bin/python -m bench.run [--db sqlite|postgresql|both] [--quick] [--only FIG,...] [--profile]

Starts the paced mock upstream (bench.mock_upstream) and `memchat serve` on a fresh database (a
temporary SQLite file, or a new database on the PostgreSQL server at 127.0.0.1:5432), signs up a
user and creates agents through the API, runs each figure in its own load-generator process
(bench.loadgen), seeds large histories with SQL for the history figure, and counts SQL per turn
with bench.sql_probe_server. Writes bench/results/latest.{md,json} and the PNG plots.
--profile also records py-spy profiles of the server under the TTFB, throughput and held-streams loads
(bench/results/profiles/, not committed).
"""

import argparse
import asyncio
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from bench import report
from bench.seed import analyze, seed_conversation
from bench.variants import VARIANTS

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
PYTHON = sys.executable
MEMCHAT = str(Path(PYTHON).parent / "memchat")
PG_ADMIN_DSN = "postgresql://postgres@127.0.0.1:5432/test"
PG_URL = "postgresql+asyncpg://postgres@127.0.0.1:5432/{db}"
HISTORY_SIZES = (10, 1_000, 100_000)
HISTORY_MEMORIES = 10_000

QUICK = {
    "ttfbPairs": 60,
    "ttfbMaxS": 20,
    "gapRounds": 1,
    "gapParallel": 8,
    "concurrency": [1, 16, 64, 256],
    "warmupS": 0.5,
    "durationS": 2.0,
    "maxWindowS": 6.0,
    "streamLevels": [25, 100, 300, 1000],
    "streamDeltas": 150,
    "streamsMaxS": 45,
    "historyRounds": 15,
    "historyMaxS": 20,
    "sqlTurns": 10,
}
FULL = {
    "ttfbPairs": 300,
    "ttfbMaxS": 90,
    "gapRounds": 5,
    "gapParallel": 8,
    "concurrency": [1, 16, 64, 256],
    "warmupS": 1.0,
    "durationS": 8.0,
    "maxWindowS": 30.0,
    "streamLevels": [10, 25, 50, 100, 250, 500, 750, 1000, 1500, 2000],
    "streamDeltas": 300,
    "streamsMaxS": 300,
    "historyRounds": 60,
    "historyMaxS": 90,
    "sqlTurns": 20,
}
ALL_FIGURES = ("ttfb", "gap", "throughput", "streams", "history", "sql")


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_http(url: str, timeout_s: float = 60.0, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{url}: the process exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {timeout_s} s")


@contextmanager
def process(args: list[str], *, env: dict[str, str], cwd: Path, log_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    with open(log_path, "wb") as out:
        proc = subprocess.Popen(args, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
        try:
            yield proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)


@contextmanager
def mock_upstream(workdir: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The paced mock upstream (bench.mock_upstream) on a free port, once it answers: (URL, process)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [PYTHON, "-m", "bench.mock_upstream", "--host", "127.0.0.1", "--port", str(port)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with process(cmd, env=env, cwd=ROOT, log_path=workdir / "mock.log") as mock:
        wait_http(f"{url}/healthz", proc=mock)
        yield url, mock


def run_loadgen(figure: str, plan: dict[str, Any], workdir: Path, timeout_s: float = 900) -> dict[str, Any]:
    plan_path, out_path = workdir / f"plan-{figure}.json", workdir / f"result-{figure}.json"
    plan_path.write_text(json.dumps(plan))
    log(f"figure {figure} ...")
    subprocess.run(
        [PYTHON, "-m", "bench.loadgen", figure, "--plan", str(plan_path), "--out", str(out_path)],
        cwd=ROOT,
        check=True,
        timeout=timeout_s,
    )
    result: dict[str, Any] = json.loads(out_path.read_text())
    return result


class Api:
    """The few API calls the setup needs, through memchat's public HTTP API."""

    def __init__(self, base_url: str):
        self._client = httpx.Client(base_url=base_url, timeout=30.0)
        self.token = ""

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def signup(self) -> str:
        email = f"bench-{uuid.uuid4().hex[:12]}@example.com"
        r = self._client.post("/api/auth/signup", json={"email": email, "password": "bench-password-1"})
        r.raise_for_status()
        self.token = r.json()["token"]
        user_id: str = r.json()["user"]["id"]
        return user_id

    def create_agent(self, name: str) -> str:
        r = self._client.post("/api/agents", json={"name": name}, headers=self._headers())
        r.raise_for_status()
        agent_id: str = r.json()["id"]
        return agent_id

    def conversation_id(self, agent_id: str) -> str:
        r = self._client.get(f"/api/agents/{agent_id}/conversation", headers=self._headers())
        r.raise_for_status()
        conversation_id: str = r.json()["id"]
        return conversation_id

    def close(self) -> None:
        self._client.close()


@contextmanager
def database(kind: str, workdir: Path) -> Iterator[str]:
    if kind == "sqlite":
        yield f"sqlite+aiosqlite:///{workdir / 'memchat.sqlite3'}"
        return
    import asyncpg

    name = f"memchat_bench_{uuid.uuid4().hex[:10]}"

    async def admin(sql: str) -> None:
        conn = await asyncpg.connect(PG_ADMIN_DSN)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(admin(f'CREATE DATABASE "{name}"'))
    try:
        yield PG_URL.format(db=name)
    finally:
        asyncio.run(admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def memchat_env(database_url: str, mock_url: str, workdir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCHAT_")}
    env.update(
        {
            "MEMCHAT_DATABASE_URL": database_url,
            "MEMCHAT_DATA_DIR": str(workdir / "data"),
            "MEMCHAT_LLM_BASE_URL": f"{mock_url}/v1",
            "MEMCHAT_LLM_API_KEY": "not-needed",
            "MEMCHAT_JWT_SECRET": "bench-secret-" + "x" * 40,
            "MEMCHAT_CHAT_RATE_LIMIT_PER_MINUTE": "0",  # the load is one user; the limit is per user
            "MEMCHAT_WEB_DIST_DIR": str(workdir / "no-console"),
            # this tree's memchat, not the one the venv's editable install points at (a worktree
            # sharing another tree's venv), as bench.ab does
            "PYTHONPATH": os.pathsep.join((str(ROOT / "src"), str(ROOT))),
        }
    )
    return env


def profile(pid: int, seconds: int, out: Path) -> subprocess.Popen[bytes] | None:
    spy = shutil.which("py-spy", path=str(Path(PYTHON).parent)) or shutil.which("py-spy")
    if spy is None:
        log("py-spy not found: pip install py-spy into the venv")
        return None
    out.parent.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [spy, "record", "--pid", str(pid), "--duration", str(seconds), "--rate", "250", "--gil"]
        + ["--format", "raw", "--nonblocking", "--output", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )


def bench_database(
    kind: str,
    figures: list[str],
    sizes: dict[str, Any],
    mock_url: str,
    mock_pid: int,
    do_profile: bool,
    variant: str | None = None,
    workers: int = 1,
) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix=f"memchat-bench-{kind}-") as tmp, database(kind, Path(tmp)) as url:
        workdir = Path(tmp)
        env = memchat_env(url, mock_url, workdir)
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        serve = [MEMCHAT, "serve", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", "--migrate"]
        if workers > 1:  # PostgreSQL only; the workers share the limits through Redis
            serve += ["--workers", str(workers)]
            env["MEMCHAT_REDIS_URL"] = os.environ.get("MEMCHAT_REDIS_URL", "redis://127.0.0.1:6379/15")
        if variant:
            serve = [PYTHON, "-m", "bench.variant_server", "--variant", variant, "--port", str(port)]
        with process(serve, env=env, cwd=workdir, log_path=workdir / "memchat.log") as server:
            wait_http(f"{base}/healthz", proc=server)
            api = Api(base)
            user_id = api.signup()
            n_agents = max(sizes["concurrency"])
            agents = [api.create_agent(f"bench {i}") for i in range(n_agents)]
            plan: dict[str, Any] = {
                "memchatUrl": base,
                "mockUrl": mock_url,
                "token": api.token,
                "agents": agents,
                "serverPid": server.pid,
                "mockPid": mock_pid,
                "quick": sizes is QUICK,
                "sizes": sizes,
            }
            for figure in ("ttfb", "gap", "throughput", "streams"):
                if figure in figures:
                    results[figure] = run_loadgen(figure, plan, workdir)
            if do_profile:
                results["profiles"] = profile_server(
                    plan, server.pid, workdir, kind + (f"-{variant}" if variant else "")
                )
            if "history" in figures:
                history_agents: dict[str, str] = {}
                now_ms = int(time.time() * 1000) - 10_000_000
                for n in HISTORY_SIZES:
                    agent_id = api.create_agent(f"history {n}")
                    conversation_id = api.conversation_id(agent_id)
                    started = time.perf_counter()
                    asyncio.run(
                        seed_conversation(
                            url,
                            user_id=user_id,
                            agent_id=agent_id,
                            conversation_id=conversation_id,
                            messages=n,
                            memories=HISTORY_MEMORIES,
                            start_ms=now_ms,
                        )
                    )
                    log(f"seeded {n} messages + {HISTORY_MEMORIES} memories in {time.perf_counter() - started:.1f} s")
                    history_agents[str(n)] = agent_id
                if kind == "postgresql":
                    asyncio.run(analyze(url))  # autovacuum would have done this on a long-lived database
                plan_h = dict(plan, historyAgents=history_agents, sizes=dict(sizes, memories=HISTORY_MEMORIES))
                results["history"] = run_loadgen("history", plan_h, workdir)
            api.close()
        if "sql" in figures:
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            probe = [PYTHON, "-m", "bench.sql_probe_server", "--host", "127.0.0.1", "--port", str(port)]
            if variant:
                probe += ["--variant", variant]
            with process(probe, env=env, cwd=workdir, log_path=workdir / "probe.log") as server:
                wait_http(f"{base}/healthz", proc=server)
                api = Api(base)
                api.signup()
                plan = dict(plan, memchatUrl=base, token=api.token, agents=[api.create_agent("sql probe")])
                plan["serverPid"] = server.pid
                results["sql"] = run_loadgen("sql", plan, workdir)
                api.close()
        logs = RESULTS / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        for name in ("memchat.log", "probe.log"):
            path = workdir / name
            if path.exists():
                shutil.copy(path, logs / f"{kind}-{name}")
                text = path.read_text(errors="replace")
                n_errors = text.count("ERROR")
                if n_errors:
                    log(f"{name} ({kind}) has {n_errors} ERROR lines: bench/results/logs/{kind}-{name}")
    return results


def profile_server(plan: dict[str, Any], pid: int, workdir: Path, kind: str) -> dict[str, str]:
    """py-spy under three loads: sequential TTFB pairs, the throughput run at concurrency 64, and
    250 paced streams held open (opened in about a second, then 15 s of deltas)."""
    out: dict[str, str] = {}
    loads = {
        "ttfb": dict(plan["sizes"], ttfbPairs=400, ttfbMaxS=20),
        "throughput": dict(plan["sizes"], concurrency=[64], warmupS=0.5, durationS=15.0, sides=["memchat"]),
        "streams": dict(plan["sizes"], streamLevels=[250], streamDeltas=750, streamSides=["memchat"]),
    }
    for figure, sizes in loads.items():
        target = RESULTS / "profiles" / f"{kind}-{figure}.txt"
        spy = profile(pid, 16, target)
        if spy is None:
            break
        time.sleep(1.0)
        run_loadgen(figure, dict(plan, sizes=sizes), workdir)
        spy.wait(timeout=60)
        out[figure] = str(target.relative_to(ROOT))
        log(f"profile written: {target}")
    return out


def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "kernel": platform.release(),
        "loadAvgAtStart": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", choices=("sqlite", "postgresql", "both"), default="sqlite")
    parser.add_argument("--quick", action="store_true", help="small sizes: the whole run in about two minutes")
    parser.add_argument("--only", default=",".join(ALL_FIGURES), help="comma-separated figures to run")
    parser.add_argument("--profile", action="store_true", help="also record py-spy profiles of the server")
    parser.add_argument(
        "--workers", type=int, default=1, help="memchat serve --workers N (PostgreSQL and Redis); writes workers-N.*"
    )
    parser.add_argument("--out", default=str(RESULTS), help="where latest.md/json and the plots go")
    parser.add_argument(
        "--variant",
        choices=sorted(VARIANTS),
        help="serve memchat with an experimental hot-path variant (bench.variants); writes variant-NAME.*",
    )
    args = parser.parse_args()
    figures = [f for f in args.only.split(",") if f]
    unknown = set(figures) - set(ALL_FIGURES)
    if unknown:
        parser.error(f"unknown figures: {', '.join(sorted(unknown))}")
    sizes = QUICK if args.quick else FULL
    kinds = ["sqlite", "postgresql"] if args.db == "both" else [args.db]
    if args.workers > 1 and "sqlite" in kinds:
        parser.error("--workers above 1 needs --db postgresql (SQLite has one writer)")
    started = time.perf_counter()
    info = machine()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="memchat-bench-mock-") as tmp:
        with mock_upstream(Path(tmp)) as (mock_url, mock):
            by_db = {
                kind: bench_database(
                    kind, figures, sizes, mock_url, mock.pid, args.profile, args.variant, workers=args.workers
                )
                for kind in kinds
            }
    document = {
        "machine": info,
        "mode": "quick" if args.quick else "full",
        "variant": args.variant,
        "workers": args.workers,
        "sizes": sizes,
        "startedAt": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "wallS": round(time.perf_counter() - started, 1),
        "results": by_db,
    }
    stem = f"variant-{args.variant}" if args.variant else ("latest" if args.workers == 1 else f"workers-{args.workers}")
    (out_dir / f"{stem}.json").write_text(json.dumps(document, indent=2, ensure_ascii=False))
    markdown = report.markdown(document)
    (out_dir / f"{stem}.md").write_text(markdown)
    report.plots(document, out_dir, prefix="" if stem == "latest" else f"{stem}-")
    print(markdown)
    log(f"done in {document['wallS']} s: {out_dir / (stem + '.md')}")


if __name__ == "__main__":
    main()
