"""Two or more memchat servers measured side by side in one run, interleaved: A, B, A, B ...

    .venv/bin/python -m bench.ab --db sqlite \\
        --side before=/work/wt-perf-base --side after=. [--side 'granian=.::--server granian'] \\
        [--ttfb-rounds 300] [--tp-rounds 4] [--tp-seconds 5] [--concurrency 64] [--name ab-hot-path]

Each side is `NAME=TREE[::SERVE ARGS]`: TREE's own venv runs `memchat serve` (so a baseline
worktree of main serves today's code) with the extra arguments, on its own fresh database, all
against one mock upstream. On a shared 2-core machine only figures taken in the same run mean
anything, so every figure rotates the sides:

- time to first byte: each round sends one request straight to the mock and one turn to every
  side (in a rotating order); a side's added time is its TTFB less that round's direct TTFB;
- turns per second at one concurrency (instant 64-delta replies): every round runs one closed-loop
  window per side, in a rotating order, and one window straight to the mock (the harness's own
  ceiling); the server's CPU seconds (the process and its children: workers) give turns per
  server CPU-second, and the mock's and this process's CPU are kept too.

Writes bench/results/NAME.{json,md} with the machine, its load average before and after each
figure, and the command.
"""

import argparse
import asyncio
import json
import math
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import uvloop

from bench.ab_report import markdown
from bench.loadgen import (
    DEFAULT_DELTAS,
    PACED_GAP_MS,
    TTFB_DELTAS,
    TTFB_GAP_MS,
    Plan,
    _complete,
    _stream_level,
    chat,
    closed_loop,
    configure_mock,
    direct,
    mock_stats,
)
from bench.run import (
    PYTHON,
    RESULTS,
    Api,
    database,
    free_port,
    log,
    machine,
    memchat_env,
    mock_upstream,
    process,
    wait_http,
)
from bench.stats import cpu_seconds, descendants, summary_ms

REDIS_URL = "redis://127.0.0.1:6379/15"
MEMORY_TEXTS = (
    "The user's sister lives in Lisbon",
    "The user is allergic to peanuts",
    "用户周末喜欢去爬山",
    "The user works night shifts at a hospital",
    "用户养了一只叫豆豆的猫",
    "The user prefers short answers",
)
_ENV_WORD = re.compile(r"^[A-Z][A-Z0-9_]*=")


SERVICES = ("postgres", "redis-server")


def services_cpu_seconds() -> float:
    """CPU seconds of every PostgreSQL and Redis process now running (they share the cores too)."""
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/comm") as comm:
                name = comm.read().strip()
        except OSError:
            continue
        if name in SERVICES:
            total += cpu_seconds(int(entry))
    return total


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of a process and all its descendants (uvicorn's workers, granian's)."""
    return sum(cpu_seconds(p) for p in [pid, *descendants(pid)])


def parse_side(spec: str) -> tuple[str, Path, list[str], dict[str, str]]:
    """NAME=TREE[::ARGS]; an argument NAME=VALUE in capitals (MEMCHAT_PROFILE=seed-v1) is an
    environment variable of that side's server."""
    name, _, rest = spec.partition("=")
    tree, _, args = rest.partition("::")
    if not name or not tree:
        raise SystemExit(f"--side NAME=TREE[::ARGS], not {spec!r}")
    words = shlex.split(args)
    env = dict(w.split("=", 1) for w in words if _ENV_WORD.match(w))
    return name, Path(tree).resolve(), [w for w in words if not _ENV_WORD.match(w)], env


class Side:
    def __init__(self, name: str, url: str, token: str, agents: list[str], pid: int, mock_url: str, mock_pid: int):
        self.name, self.pid = name, pid
        self.plan = Plan(url, mock_url, token, agents, {}, pid, mock_pid, False, {})
        self.sent = 0  # turns of the throughput windows so far: where this side is in DIALOG_TEXTS


# `--texts dialogs`: what people say, in order, from the recall benchmark's development dialogs
# (bench/memory_eval/recall: the sets already looked at, 18,000 user lines in both languages), so
# the memory work is measured on facts, changes and small talk rather than one request said again
DIALOG_SETS = ("dialogs", "heldout", *(f"heldout{n}" for n in range(2, 14)))
DIALOG_TEXTS: list[str] = []


def load_dialog_texts() -> list[str]:
    folder = Path(__file__).parent / "memory_eval" / "recall"
    return [
        turn["user"]
        for name in DIALOG_SETS
        for line in (folder / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
        for turn in json.loads(line)["turns"]
    ]


def _loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


async def ttfb_rounds(sides: list[Side], rounds: int, max_s: float) -> dict[str, Any]:
    plan0 = sides[0].plan
    await configure_mock(plan0, deltas=TTFB_DELTAS, gap_ms=TTFB_GAP_MS)
    conns = {s.name: s.plan.memchat() for s in sides}
    mock = plan0.mock()
    for _ in range(20):  # warm-up
        for s in sides:
            await chat(s.plan, conns[s.name], s.plan.agents[0])
        await direct(mock)
    added: dict[str, list[float]] = {s.name: [] for s in sides}
    diffs: dict[str, list[float]] = {s.name: [] for s in sides[1:]}
    bad = 0
    order = list(sides)
    load = [_loadavg()]
    deadline = time.perf_counter() + max_s
    for _ in range(rounds):
        if time.perf_counter() > deadline:
            break
        order = order[1:] + order[:1]
        rd = await direct(mock)
        responses = {}
        for s in order:
            responses[s.name] = await chat(s.plan, conns[s.name], s.plan.agents[0])
            await asyncio.sleep(0.005)
        if not _complete(rd, TTFB_DELTAS) or not all(_complete(r, TTFB_DELTAS) for r in responses.values()):
            bad += 1
            continue
        base = responses[sides[0].name].ttfb
        for s in sides:
            added[s.name].append(responses[s.name].ttfb - rd.ttfb)
        for s in sides[1:]:
            diffs[s.name].append(responses[s.name].ttfb - base)
    for conn in (*conns.values(), mock):
        conn.close()
    load.append(_loadavg())
    return {
        "rounds": len(added[sides[0].name]),
        "incomplete": bad,
        "addedTtfb": {name: summary_ms(v) for name, v in added.items()},
        "differenceToFirst": {name: summary_ms(v) for name, v in diffs.items()},
        "loadAvg": load,
    }


async def _drain(pid: int, max_s: float = 120.0) -> float:
    """Wait until the server is idle again (under 5% of a core for half a second): the work a turn
    leaves for after its reply (memory extraction, vectors) belongs to that side's window, not to
    the next side's, and its CPU is counted with the turns that caused it."""
    started = time.perf_counter()
    last = tree_cpu_seconds(pid)
    while time.perf_counter() - started < max_s:
        await asyncio.sleep(0.5)
        now = tree_cpu_seconds(pid)
        if now - last < 0.025:
            break
        last = now
    return round(time.perf_counter() - started, 2)


async def _window(side: Side | None, plan0: Plan, concurrency: int, seconds: float) -> dict[str, Any]:
    target = side.plan if side is not None else plan0
    agents = target.agents
    pid = side.pid if side is not None else 0
    before = {"server": tree_cpu_seconds(pid) if pid else 0.0, "mock": cpu_seconds(plan0.mock_pid)}
    before["services"] = services_cpu_seconds()
    before["harness"] = cpu_seconds(os.getpid())

    if side is None:

        async def make(conn: Any, k: int) -> Any:
            return await direct(conn)

        connect = plan0.mock
    else:

        async def make(conn: Any, k: int) -> Any:
            if not DIALOG_TEXTS:
                return await chat(target, conn, agents[k % len(agents)])
            assert side is not None
            side.sent += 1  # no side is sent a text twice: each would be its embedding reused
            return await chat(target, conn, agents[k % len(agents)], text=DIALOG_TEXTS[side.sent % len(DIALOG_TEXTS)])

        connect = target.memchat
    result = await closed_loop(make, connect, concurrency, 0.5, seconds, DEFAULT_DELTAS, max_window_s=seconds * 3)
    if pid:
        result["drainS"] = await _drain(pid)
    spent = {
        "server": (tree_cpu_seconds(pid) if pid else 0.0) - before["server"],
        "mock": cpu_seconds(plan0.mock_pid) - before["mock"],
        "services": services_cpu_seconds() - before["services"],
        "harness": cpu_seconds(os.getpid()) - before["harness"],
    }
    result["cpuS"] = {k: round(v, 3) for k, v in spent.items()}
    errors: dict[str, int] = {}
    for key, count in result["errors"].items():
        key = re.sub(r'"requestId":"[0-9a-f]+"', '"requestId":"…"', key)
        errors[key] = errors.get(key, 0) + count
    result["errors"] = errors
    return result


def _py_spy(pid: int, seconds: float, out: Path) -> "subprocess.Popen[bytes] | None":
    spy = shutil.which("py-spy", path=str(Path(PYTHON).parent)) or shutil.which("py-spy")
    if spy is None:
        log("py-spy is not installed: no profile")
        return None
    out.parent.mkdir(parents=True, exist_ok=True)
    args = [spy, "record", "--pid", str(pid), "--duration", str(int(seconds)), "--rate", "200", "--subprocesses"]
    args += ["--format", "raw", "--nonblocking", "--output", str(out)]
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)


async def throughput_rounds(
    sides: list[Side], rounds: int, seconds: float, concurrency: int, profile: str | None = None
) -> dict[str, Any]:
    plan0 = sides[0].plan
    await configure_mock(plan0, deltas=DEFAULT_DELTAS, gap_ms=0)
    windows: dict[str, list[dict[str, Any]]] = {s.name: [] for s in sides}
    windows["direct"] = []
    load = [_loadavg()]
    order: list[Side | None] = [*sides, None]
    for r in range(rounds):
        order = order[1:] + order[:1]
        for side in order:
            spy = None
            if profile and r == 0 and side is not None:  # the first round's windows, sampled by py-spy
                spy = _py_spy(side.pid, seconds + 2, RESULTS / "profiles" / f"{profile}-{side.name}.txt")
            result = await _window(side, plan0, concurrency, seconds)
            if spy is not None:
                await asyncio.to_thread(spy.wait, 60)
            name = side.name if side is not None else "direct"
            windows[name].append(result)
            log(f"round {r + 1} {name}: {result['turnsPerS']}/s, cpu {result['cpuS']}")
            await asyncio.sleep(0.5)
        load.append(_loadavg())
    summary: dict[str, Any] = {}
    for name, rows in windows.items():
        tps = [w["turnsPerS"] for w in rows]
        turns = [w["turnsPerS"] * w["windowS"] for w in rows]
        server_cpu = sum(w["cpuS"]["server"] for w in rows)
        total_turns = sum(turns)
        summary[name] = {
            "turnsPerS": tps,
            "median": statistics.median(tps),
            # the CPU counters include each window's warm-up and the drain of the work left after it
            "turnsPerServerCpuS": round(total_turns / server_cpu, 1) if server_cpu else None,
            "drainS": [w.get("drainS", 0.0) for w in rows],
            "mockCpuMsPerTurn": round(1000 * sum(w["cpuS"]["mock"] for w in rows) / total_turns, 3),
            "servicesCpuMsPerTurn": round(1000 * sum(w["cpuS"].get("services", 0.0) for w in rows) / total_turns, 3),
            "harnessCpuMsPerTurn": round(1000 * sum(w["cpuS"]["harness"] for w in rows) / total_turns, 3),
            "ttfbP50Ms": statistics.median(w["ttfb"].get("p50", float("nan")) for w in rows),
            "failed": sum(w["failed"] for w in rows),
        }
    first = sides[0].name
    for s in sides[1:]:
        ratios = [a / b for a, b in zip(summary[s.name]["turnsPerS"], summary[first]["turnsPerS"], strict=True) if b]
        summary[s.name]["ratioToFirst"] = round(statistics.median(ratios), 3) if ratios else None
    return {"concurrency": concurrency, "windowS": seconds, "summary": summary, "windows": windows, "loadAvg": load}


_INSIDE = ("memchat_stream_delta_delay_seconds", "memchat_event_loop_lag_seconds")


def _inside_buckets(url: str) -> dict[str, dict[str, float]]:
    """The server's own lateness histograms (cumulative buckets by `le`, and `count`), from /metrics."""
    from prometheus_client.parser import text_string_to_metric_families

    text = httpx.get(f"{url}/metrics", timeout=30).text
    out: dict[str, dict[str, float]] = {name: {} for name in _INSIDE}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            for name in _INSIDE:
                if sample.name == f"{name}_bucket":
                    le = sample.labels["le"]
                    out[name][le] = out[name].get(le, 0.0) + sample.value
                elif sample.name == f"{name}_count":
                    out[name]["count"] = out[name].get("count", 0.0) + sample.value
    return out


def inside_lateness(before: dict[str, dict[str, float]], after: dict[str, dict[str, float]]) -> dict[str, Any]:
    """What the server measured of itself over a window: batches of deltas that waited in the relay
    over 50 ms, and 100 ms loop ticks that fired over 50 ms late (`memchat_*` histograms)."""
    row: dict[str, Any] = {}
    for name, key in zip(_INSIDE, ("deltaBatches", "loopTicks"), strict=True):
        count = after[name].get("count", 0.0) - before[name].get("count", 0.0)
        within = after[name].get("0.05", 0.0) - before[name].get("0.05", 0.0)
        row[key] = int(count)
        row[f"{key}Over50ms"] = int(count - within)
        worst = [
            float(le)
            for le in after[name]
            if le not in ("count", "+Inf") and after[name][le] - before[name].get(le, 0.0) < count
        ]
        row[f"{key}WorstAboveS"] = max(worst) if worst else 0.0  # the largest bucket bound some exceeded
    return row


async def stream_levels(sides: list[Side], n: int, open_rate: float) -> dict[str, Any]:
    """`n` paced streams (20 ms between deltas) per side, the mock's own first (the harness's
    ceiling): each long enough to be open all at once when they open at `open_rate` per second."""
    plan0 = sides[0].plan
    deltas = min(3000, max(150, math.ceil((n / open_rate + 3.0) / (PACED_GAP_MS / 1000.0))))
    rows: dict[str, Any] = {}
    load = [_loadavg()]
    for side in [None, *sides]:
        name = side.name if side is not None else "direct"
        plan = side.plan if side is not None else plan0
        await mock_stats(plan0, reset=True)
        inside = await asyncio.to_thread(_inside_buckets, plan.memchat_url) if side is not None else None
        row = await _stream_level(plan, "memchat" if side is not None else "direct", n, deltas)
        row["mock"] = await mock_stats(plan0)
        if inside is not None:
            row["inside"] = inside_lateness(inside, await asyncio.to_thread(_inside_buckets, plan.memchat_url))
        rows[name] = row
        log(
            f"streams {name} n={n}: peak open {row['peakOpen']}, dropped {row['dropped']}, late {row['lateChunks']}, "
            f"worst {row['worstLatenessMs']} ms, all open after {row['allOpenAfterS']} s"
        )
        if side is not None:
            await _drain(side.pid)
        await asyncio.sleep(1.0)
        load.append(_loadavg())
    return {"streams": n, "deltasPerStream": deltas, "sides": rows, "loadAvg": load}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--side", action="append", required=True, help="NAME=TREE[::SERVE ARGS]; the first is A")
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--redis", action="store_true", help="MEMCHAT_REDIS_URL for every side (needed by --workers)")
    parser.add_argument("--ttfb-rounds", type=int, default=300)
    parser.add_argument("--ttfb-max-s", type=float, default=240.0)
    parser.add_argument("--tp-rounds", type=int, default=4, help="0 skips the throughput figure")
    parser.add_argument("--tp-seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--streams", type=int, default=0, help="N paced streams per side (0: not run)")
    parser.add_argument("--open-rate", type=float, default=40.0, help="streams opened per second, to size them")
    parser.add_argument("--memories", type=int, default=0, help="memories stored on the TTFB agent of every side")
    parser.add_argument(
        "--texts",
        choices=("request", "dialogs"),
        default="request",
        help="what the throughput windows' turns say: one request with its turn's number, or people's lines",
    )
    parser.add_argument("--name", default="ab")
    parser.add_argument("--profile", action="store_true", help="py-spy each side in the first throughput round")
    args = parser.parse_args()
    specs = [parse_side(s) for s in args.side]
    info = machine()
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    doc: dict[str, Any] = {"name": args.name, "db": args.db, "machine": info, "startedAt": started}
    with tempfile.TemporaryDirectory(prefix="memchat-ab-") as tmp, ExitStack() as stack:
        workdir = Path(tmp)
        mock_url, mock = stack.enter_context(mock_upstream(workdir))
        sides: list[Side] = []
        for name, tree, extra, side_env in specs:
            sdir = workdir / name
            sdir.mkdir()
            url = stack.enter_context(database(args.db, sdir))
            env = memchat_env(url, mock_url, sdir)
            env["PYTHONPATH"] = str(tree / "src")
            if args.redis:
                env["MEMCHAT_REDIS_URL"] = REDIS_URL
            env.update(side_env)
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            serve = [str(tree / ".venv" / "bin" / "memchat"), "serve", "--host", "127.0.0.1", "--port", str(port)]
            serve += ["--log-level", "warning", "--migrate", *extra]
            server = stack.enter_context(process(serve, env=env, cwd=sdir, log_path=sdir / "memchat.log"))
            wait_http(f"{base}/healthz", proc=server)
            api = Api(base)
            api.signup()
            agents = [api.create_agent(f"ab {name} {i}") for i in range(max(1, args.concurrency))]
            for i in range(args.memories):  # on the TTFB agent: ranked recall embeds the message before the call
                api._client.post(
                    f"/api/agents/{agents[0]}/memories",
                    json={"type": "fact", "content": MEMORY_TEXTS[i % len(MEMORY_TEXTS)] + f" ({i})"},
                    headers={"Authorization": f"Bearer {api.token}"},
                ).raise_for_status()
            sides.append(Side(name, base, api.token, agents, server.pid, mock_url, mock.pid))
            api.close()
        doc["sides"] = [s.name for s in sides]
        doc["sideArgs"] = {
            name: " ".join([str(tree), *extra, *(f"{k}={v}" for k, v in e.items())]) for name, tree, extra, e in specs
        }
        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
        if args.memories:
            for side in sides:  # their vectors are written after each response: wait for the servers to settle
                asyncio.run(_drain(side.pid))
            doc["memoriesOnTtfbAgent"] = args.memories
        if args.ttfb_rounds:
            log(f"ttfb: {args.ttfb_rounds} rounds over {', '.join(doc['sides'])} ...")
            doc["ttfb"] = asyncio.run(ttfb_rounds(sides, args.ttfb_rounds, args.ttfb_max_s))
        if args.texts == "dialogs":
            DIALOG_TEXTS.extend(load_dialog_texts())
            doc["texts"] = f"dialogs: {len(DIALOG_TEXTS)} user lines of {', '.join(DIALOG_SETS)}"
        if args.tp_rounds:
            log(f"throughput: {args.tp_rounds} rounds at c={args.concurrency} ...")
            doc["throughput"] = asyncio.run(
                throughput_rounds(
                    sides, args.tp_rounds, args.tp_seconds, args.concurrency, args.name if args.profile else None
                )
            )
        logs = RESULTS / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        if args.streams:
            log(f"streams: {args.streams} per side ...")
            doc["streams"] = asyncio.run(stream_levels(sides, args.streams, args.open_rate))
        for s in sides:
            text = (workdir / s.name / "memchat.log").read_text(errors="replace")
            (logs / f"{args.name}-{s.name}.log").write_text(text)
            if "ERROR" in text:
                log(f"{s.name}: {text.count('ERROR')} ERROR lines in bench/results/logs/{args.name}-{s.name}.log")
    doc["command"] = "python -m bench.ab " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    doc["loadAvgAtEnd"] = _loadavg()
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(doc, indent=2))
    text = markdown(doc)
    (RESULTS / f"{args.name}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
