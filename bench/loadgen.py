"""The load generator: runs one benchmark figure against memchat and the mock upstream, in its own process.

    python -m bench.loadgen FIGURE --plan plan.json --out result.json

FIGURE is one of ttfb, gap, throughput, streams, history, sql. The plan (written by bench.run)
names the two servers, the bearer token, the agents to talk to, the process ids whose CPU and
memory are read from /proc, and the sizes (quick or full). Every loop is bounded in count and
in time, and only loopback addresses are accepted.

"direct" is the same kind of request sent straight to the mock upstream, measured in the same
run: the ratio memchat/direct is the headline, absolute times on a shared machine are not.
"""

import argparse
import asyncio
import itertools
import json
import math
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import orjson
import uvloop

from bench.httpclient import Connection, Response
from bench.stats import CpuMeter, percentile, rss_kib, summary_ms

USER_TEXT = "Tell me something calm about the weekend, in two short sentences."
LATE_CHUNK_S = 0.050
PACED_GAP_MS = 20.0
DEFAULT_DELTAS = 64

# The request memchat sends upstream carries a system prompt, the profile and recent history;
# the direct request carries a comparable body so both paths parse a similar amount of JSON.
_DIRECT_MESSAGES = [
    {"role": "system", "content": "你是 AI Agent Web 控制台里的聊天陪伴助手。\n" * 4},
    {"role": "user", "content": "聊天对象：bench（bench）\n对象状态：，\n关系阶段：\n聊天主题：\n共同点："},
    {"role": "user", "content": USER_TEXT},
]


def log(message: str) -> None:
    print(f"[loadgen] {message}", file=sys.stderr, flush=True)


def _host_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    if parts.hostname is None or parts.port is None:
        raise ValueError(f"a URL with host and port is needed: {url}")
    return parts.hostname, parts.port


@dataclass
class Plan:
    memchat_url: str
    mock_url: str
    token: str
    agents: list[str]
    history_agents: dict[str, str]
    server_pid: int
    mock_pid: int
    quick: bool
    sizes: dict[str, Any]

    @classmethod
    def load(cls, path: str) -> "Plan":
        raw = json.loads(open(path).read())
        return cls(
            memchat_url=raw["memchatUrl"],
            mock_url=raw["mockUrl"],
            token=raw.get("token", ""),
            agents=raw.get("agents", []),
            history_agents=raw.get("historyAgents", {}),
            server_pid=int(raw.get("serverPid", 0)),
            mock_pid=int(raw.get("mockPid", 0)),
            quick=bool(raw.get("quick", False)),
            sizes=raw.get("sizes", {}),
        )

    def memchat(self) -> Connection:
        return Connection(*_host_port(self.memchat_url))

    def mock(self) -> Connection:
        return Connection(*_host_port(self.mock_url))

    def cpu(self) -> CpuMeter:
        import os

        return CpuMeter({"memchat": self.server_pid, "mock": self.mock_pid, "loadgen": os.getpid()})


# --- requests -------------------------------------------------------------------------------


def chat_body(agent_id: str, text: str = USER_TEXT) -> bytes:
    return orjson.dumps(
        {
            "agentId": agent_id,
            "id": "chat-1",
            "trigger": "submit-message",
            "messages": [{"id": f"m-{uuid.uuid4().hex}", "role": "user", "parts": [{"type": "text", "text": text}]}],
        }
    )


# every turn's text differs (the turn's number at its end), as people's messages do: the server
# keeps the vectors of texts it embedded moments before, and one text sent again and again would
# measure that memory instead of the model
_TURN_NUMBERS = itertools.count(1)


async def chat(
    plan: Plan, conn: Connection, agent_id: str, timeout_s: float = 60.0, text: str | None = None
) -> Response:
    if text is None:
        text = f"{USER_TEXT} ({next(_TURN_NUMBERS)})"
    headers = {"authorization": f"Bearer {plan.token}", "content-type": "application/json"}
    return await conn.request(
        "POST", "/api/chat", body=chat_body(agent_id, text), headers=headers, keep_body=True, timeout_s=timeout_s
    )


_DIRECT_HEADERS = {"authorization": "Bearer not-needed", "content-type": "application/json"}


def _direct_body() -> bytes:
    return orjson.dumps({"model": "default", "messages": _DIRECT_MESSAGES, "stream": True})


async def direct(conn: Connection, timeout_s: float = 60.0, deltas: int | None = None) -> Response:
    headers = dict(_DIRECT_HEADERS)
    if deltas is not None:
        headers["x-mock-deltas"] = str(deltas)
    return await conn.request("POST", "/v1/chat/completions", body=_direct_body(), headers=headers, timeout_s=timeout_s)


async def configure_mock(plan: Plan, *, deltas: int, gap_ms: float) -> None:
    conn = plan.mock()
    await conn.request("POST", "/_mock/config", body=orjson.dumps({"deltas": deltas, "gapMs": gap_ms}))
    conn.close()


async def mock_stats(plan: Plan, reset: bool = False) -> dict[str, Any]:
    conn = plan.mock()
    response = await conn.request("POST" if reset else "GET", "/_mock/stats", keep_body=True)
    conn.close()
    result: dict[str, Any] = orjson.loads(response.body) if response.body else {}
    return result


def _errors(responses: list[Response]) -> dict[str, int]:
    errors: dict[str, int] = {}
    for r in responses:
        if not r.ok:
            key = r.error or f"HTTP {r.status}: {r.body[:120].decode('utf-8', 'replace')}"
            errors[key] = errors.get(key, 0) + 1
    return errors


def _complete(r: Response, deltas: int) -> bool:
    return r.ok and len(r.delta_times) == deltas


# --- 1. added time-to-first-byte, sequential, pair by pair ------------------------------------


TTFB_DELTAS, TTFB_GAP_MS = 8, 10.0  # a short paced reply: the first delta at once, like a real model


async def _ttfb_pairs(plan: Plan, *, deltas: int, gap_ms: float, pairs: int, max_s: float) -> dict[str, Any]:
    await configure_mock(plan, deltas=deltas, gap_ms=gap_ms)
    agent = plan.agents[0]
    m, d = plan.memchat(), plan.mock()
    for _ in range(10):
        await chat(plan, m, agent)
        await direct(d)
    cpu = plan.cpu()
    cpu.start()
    memchat_ttfb: list[float] = []
    direct_ttfb: list[float] = []
    added: list[float] = []
    bad: list[Response] = []
    deadline = time.perf_counter() + max_s
    for i in range(pairs):
        if time.perf_counter() > deadline:
            break
        if i % 2:  # alternate the order so drift and caching favour neither side
            rm = await chat(plan, m, agent)
            rd = await direct(d)
        else:
            rd = await direct(d)
            rm = await chat(plan, m, agent)
        if _complete(rm, deltas) and _complete(rd, deltas):
            memchat_ttfb.append(rm.ttfb)
            direct_ttfb.append(rd.ttfb)
            added.append(rm.ttfb - rd.ttfb)
        else:
            bad.extend(r for r in (rm, rd) if not _complete(r, deltas))
        await asyncio.sleep(0.01)
    m.close()
    d.close()
    return {
        "deltas": deltas,
        "gapMs": gap_ms,
        "pairs": len(added),
        "memchat": summary_ms(memchat_ttfb),
        "direct": summary_ms(direct_ttfb),
        "addedPaired": summary_ms(added),
        "errors": _errors(bad),
        "cpuS": cpu.stop(),
    }


async def figure_ttfb(plan: Plan) -> dict[str, Any]:
    """Sequential pairs (direct, memchat), alternating order.

    The headline uses a paced reply (first delta at once, the rest 10 ms apart), as a model
    streams. `burst` repeats it with an instant 64-delta reply, where the whole reply is in
    memchat's socket buffer at once: it shows what the relay does before the first write.
    """
    pairs, max_s = plan.sizes.get("ttfbPairs", 300), plan.sizes.get("ttfbMaxS", 90)
    result = await _ttfb_pairs(plan, deltas=TTFB_DELTAS, gap_ms=TTFB_GAP_MS, pairs=pairs, max_s=max_s)
    result["burst"] = await _ttfb_pairs(
        plan, deltas=DEFAULT_DELTAS, gap_ms=0, pairs=max(20, pairs // 3), max_s=max_s / 3
    )
    return result


# --- 2. added inter-chunk gap over paced streams ----------------------------------------------


def _gaps(r: Response) -> list[float]:
    t = r.delta_times
    return [t[i] - t[i - 1] for i in range(1, len(t))]


def _lateness(r: Response, gap_s: float) -> list[float]:
    """How late each delta came against its schedule, taking the stream's best offset as on time."""
    t = r.delta_times
    if not t:
        return []
    offset = min(t[i] - i * gap_s for i in range(len(t)))
    return [t[i] - i * gap_s - offset for i in range(len(t))]


async def figure_gap(plan: Plan) -> dict[str, Any]:
    rounds, parallel = plan.sizes.get("gapRounds", 5), plan.sizes.get("gapParallel", 8)
    deltas, gap_s = DEFAULT_DELTAS, PACED_GAP_MS / 1000.0
    await configure_mock(plan, deltas=deltas, gap_ms=PACED_GAP_MS)
    agents = plan.agents
    memchat_gaps: list[float] = []
    direct_gaps: list[float] = []
    memchat_late: list[float] = []
    direct_late: list[float] = []
    bad: list[Response] = []
    cpu = plan.cpu()
    cpu.start()
    for _ in range(rounds):
        m_conns = [plan.memchat() for _ in range(parallel)]
        d_conns = [plan.mock() for _ in range(parallel)]
        tasks: list[Awaitable[Response]] = [chat(plan, c, agents[k % len(agents)]) for k, c in enumerate(m_conns)]
        tasks += [direct(c) for c in d_conns]
        results = await asyncio.gather(*tasks)
        for k, r in enumerate(results):
            is_memchat = k < parallel
            if not _complete(r, deltas):
                bad.append(r)
                continue
            (memchat_gaps if is_memchat else direct_gaps).extend(_gaps(r))
            (memchat_late if is_memchat else direct_late).extend(_lateness(r, gap_s))
        for c in m_conns + d_conns:
            c.close()
    m_sum, d_sum = summary_ms(memchat_gaps), summary_ms(direct_gaps)
    added = {q: round(m_sum[q] - d_sum[q], 3) for q in ("p50", "p90", "p99", "max") if q in m_sum and q in d_sum}
    return {
        "streams": rounds * parallel,
        "deltasPerStream": deltas,
        "gapMs": PACED_GAP_MS,
        "memchat": m_sum,
        "direct": d_sum,
        "added": added,
        "memchatLateness": summary_ms(memchat_late),
        "directLateness": summary_ms(direct_late),
        "errors": _errors(bad),
        "cpuS": cpu.stop(),
    }


# --- 3. full turns per second with an instant upstream ----------------------------------------


async def closed_loop(
    make: Callable[[Connection, int], Awaitable[Response]],
    connect: Callable[[], Connection],
    concurrency: int,
    warmup_s: float,
    duration_s: float,
    deltas: int,
    max_window_s: float = 30.0,
) -> dict[str, Any]:
    """Closed loop: `concurrency` clients, each sending its next turn when the last one ended.

    Warm-up lasts until every client has finished one turn (and at least `warmup_s`); the measured
    window then lasts `duration_s`, or three warm-up latencies when turns are slower than that,
    so a saturated server is measured in its steady state rather than in its first wave.
    """
    start = time.perf_counter()
    window = {"measure": float("inf"), "stop": start + 120.0}  # set once warm; 120 s hard bound
    warm = [False] * concurrency
    warm_latencies: list[float] = []
    done: list[Response] = []
    bad: list[Response] = []

    async def worker(k: int) -> None:
        conn = connect()
        for _ in range(1_000_000):  # bounded; the clock ends it long before
            if time.perf_counter() >= window["stop"]:
                break
            r = await make(conn, k)
            if window["measure"] <= r.t_end <= window["stop"]:
                (done if _complete(r, deltas) else bad).append(r)
            elif not warm[k]:
                warm[k] = True
                warm_latencies.append(r.total)
                now = time.perf_counter()
                if all(warm) and now - start >= warmup_s:
                    mean = sum(warm_latencies) / len(warm_latencies)
                    window["measure"] = now
                    window["stop"] = now + min(max_window_s, max(duration_s, 3 * mean))
            if not r.ok:
                await asyncio.sleep(0.01)
        conn.close()

    async def warmup_floor() -> None:
        await asyncio.sleep(warmup_s)
        if all(warm) and window["measure"] == float("inf"):
            now = time.perf_counter()
            mean = sum(warm_latencies) / len(warm_latencies)
            window["measure"] = now
            window["stop"] = now + min(max_window_s, max(duration_s, 3 * mean))

    await asyncio.gather(warmup_floor(), *(worker(k) for k in range(concurrency)))
    measured_s = window["stop"] - window["measure"] if window["measure"] != float("inf") else float("nan")
    return {
        "concurrency": concurrency,
        "turnsPerS": round(len(done) / measured_s, 1) if measured_s == measured_s else 0.0,
        "windowS": round(measured_s, 2),
        "latency": summary_ms([r.total for r in done]),
        "ttfb": summary_ms([r.ttfb for r in done]),
        "failed": len(bad),
        "errors": _errors(bad),
    }


async def figure_throughput(plan: Plan) -> dict[str, Any]:
    levels = plan.sizes.get("concurrency", [1, 16, 64, 256])
    warmup_s, duration_s = plan.sizes.get("warmupS", 1.0), plan.sizes.get("durationS", 8.0)
    max_window_s = plan.sizes.get("maxWindowS", 30.0)
    await configure_mock(plan, deltas=DEFAULT_DELTAS, gap_ms=0)
    agents = plan.agents
    out: list[dict[str, Any]] = []
    for c in levels:
        row: dict[str, Any] = {"concurrency": c}
        for side in plan.sizes.get("sides", ["direct", "memchat"]):
            cpu = plan.cpu()
            cpu.start()
            if side == "memchat":

                async def make(conn: Connection, k: int) -> Response:
                    return await chat(plan, conn, agents[k % len(agents)])

                result = await closed_loop(make, plan.memchat, c, warmup_s, duration_s, DEFAULT_DELTAS, max_window_s)
            else:

                async def make(conn: Connection, k: int) -> Response:
                    return await direct(conn)

                result = await closed_loop(make, plan.mock, c, warmup_s, duration_s, DEFAULT_DELTAS, max_window_s)
            result["cpuS"] = cpu.stop()
            row[side] = result
            log(f"throughput c={c} {side}: {result['turnsPerS']}/s p50 {result['latency'].get('p50')} ms")
            await asyncio.sleep(0.5)
        out.append(row)
    return {"deltasPerTurn": DEFAULT_DELTAS, "durationS": duration_s, "levels": out}


# --- 4. most concurrent paced streams, none dropped or late -----------------------------------


def _peak_open(responses: list[Response]) -> int:
    events: list[tuple[float, int]] = []
    for r in responses:
        if r.delta_times:
            events.append((r.delta_times[0], 1))
            events.append((r.t_end, -1))
    events.sort()
    peak = current = 0
    for _, step in events:
        current += step
        peak = max(peak, current)
    return peak


async def _stream_level(plan: Plan, side: str, n: int, deltas: int) -> dict[str, Any]:
    gap_s = PACED_GAP_MS / 1000.0
    agents = plan.agents
    await configure_mock(plan, deltas=deltas, gap_ms=PACED_GAP_MS)
    rss_before = rss_kib(plan.server_pid) if side == "memchat" else 0
    rss_peak = rss_before
    timeout_s = deltas * gap_s + 120.0
    cpu = plan.cpu()
    cpu.start()
    launched = time.perf_counter()

    async def one(k: int) -> Response:
        conn = plan.memchat() if side == "memchat" else plan.mock()
        try:
            if side == "memchat":
                return await chat(plan, conn, agents[k % len(agents)], timeout_s=timeout_s)
            return await direct(conn, timeout_s=timeout_s)
        finally:
            conn.close()

    tasks = [asyncio.create_task(one(k)) for k in range(n)]
    for _ in range(int(timeout_s * 10) + 10):  # bounded by the streams' own timeout
        if all(t.done() for t in tasks):
            break
        await asyncio.sleep(0.1)
        if side == "memchat":
            rss_peak = max(rss_peak, rss_kib(plan.server_pid))
    results = [t.result() for t in tasks]
    late = dropped = 0
    worst = 0.0
    for r in results:
        if not _complete(r, deltas):
            dropped += 1
            continue
        lateness = _lateness(r, gap_s)
        worst = max(worst, max(lateness))
        late += sum(1 for x in lateness if x > LATE_CHUNK_S)
    peak = _peak_open(results)
    firsts = [r.delta_times[0] for r in results if r.delta_times]
    open_s = (max(firsts) - launched) if firsts else float("nan")
    return {
        "streams": n,
        "deltasPerStream": deltas,
        "peakOpen": peak,
        "dropped": dropped,
        "lateChunks": late,
        "worstLatenessMs": round(worst * 1000.0, 1),
        "allOpenAfterS": round(open_s, 2),
        "ttfb": summary_ms([r.ttfb for r in results if r.ok]),
        "clean": dropped == 0 and late == 0 and peak == n,
        "rssBeforeKiB": rss_before,
        "rssPeakKiB": rss_peak,
        "errors": _errors([r for r in results if not _complete(r, deltas)]),
        "cpuS": cpu.stop(),
    }


async def figure_streams(plan: Plan) -> dict[str, Any]:
    """Ladder of stream counts; each stream lasts long enough for all of its level to be open at once.

    Opening a stream is a whole turn setup, so the streams of a level take a while to open; each
    level's stream length is sized from the opening rate seen on the level before, so that what is
    measured is holding streams, not how fast they can be opened (that is figure 3).
    """
    levels = plan.sizes.get("streamLevels", [100, 250, 500, 1000, 1500])
    base_deltas = plan.sizes.get("streamDeltas", 250)
    max_s = plan.sizes.get("streamsMaxS", 240)
    gap_s = PACED_GAP_MS / 1000.0
    deadline = time.perf_counter() + max_s
    rows: dict[str, list[dict[str, Any]]] = {"direct": [], "memchat": []}
    best: dict[str, int] = {"direct": 0, "memchat": 0}
    rss_idle = rss_kib(plan.server_pid)
    for side in plan.sizes.get("streamSides", ["direct", "memchat"]):
        open_rate = 1000.0 if side == "direct" else 40.0  # streams opened per second, refined per level
        for n in levels:
            deltas = min(3000, max(base_deltas, math.ceil((n / open_rate + 3.0) / gap_s)))
            if time.perf_counter() + deltas * gap_s + n / open_rate > deadline:
                log(f"streams: no time left for {n} {side} streams")
                break
            if side == "memchat" and n > max(best["direct"], levels[0]):
                break  # beyond what the harness itself holds, a memchat number would mean nothing
            await mock_stats(plan, reset=True)
            row = await _stream_level(plan, side, n, deltas)
            row["mock"] = await mock_stats(plan)
            rows[side].append(row)
            if row["allOpenAfterS"] > 0:
                open_rate = max(5.0, n / row["allOpenAfterS"])
            log(
                f"streams {side} n={n} ({deltas} deltas): peak {row['peakOpen']} dropped {row['dropped']}"
                f" late {row['lateChunks']} worst {row['worstLatenessMs']} ms, all open after {row['allOpenAfterS']} s"
            )
            await asyncio.sleep(1.0)
            if not row["clean"]:
                break
            best[side] = n
    clean_memchat = [r for r in rows["memchat"] if r["clean"]]
    per_stream_kib = None
    if clean_memchat:
        top = clean_memchat[-1]
        per_stream_kib = round((top["rssPeakKiB"] - rss_idle) / top["streams"], 1)
    return {
        "gapMs": PACED_GAP_MS,
        "lateThresholdMs": LATE_CHUNK_S * 1000,
        "maxCleanStreams": best,
        "serverRssIdleKiB": rss_idle,
        "serverKiBPerOpenStream": per_stream_kib,
        "levels": rows,
    }


# --- 5. turn latency against stored history size ----------------------------------------------


async def figure_history(plan: Plan) -> dict[str, Any]:
    rounds, max_s = plan.sizes.get("historyRounds", 60), plan.sizes.get("historyMaxS", 90)
    await configure_mock(plan, deltas=DEFAULT_DELTAS, gap_ms=0)
    sizes = sorted(plan.history_agents, key=int)
    conn = plan.memchat()
    totals: dict[str, list[float]] = {s: [] for s in sizes}
    ttfbs: dict[str, list[float]] = {s: [] for s in sizes}
    bad: list[Response] = []
    for s in sizes:  # warm every conversation's pages once
        await chat(plan, conn, plan.history_agents[s])
    cpu = plan.cpu()
    cpu.start()
    deadline = time.perf_counter() + max_s
    for i in range(rounds):
        if time.perf_counter() > deadline:
            break
        order = sizes if i % 2 == 0 else list(reversed(sizes))
        for s in order:
            r = await chat(plan, conn, plan.history_agents[s])
            if _complete(r, DEFAULT_DELTAS):
                totals[s].append(r.total)
                ttfbs[s].append(r.ttfb)
            else:
                bad.append(r)
            await asyncio.sleep(0.01)
    conn.close()
    rows: dict[str, dict[str, Any]] = {
        s: {"latency": summary_ms(totals[s]), "ttfb": summary_ms(ttfbs[s])} for s in sizes
    }
    base = percentile(totals[sizes[0]], 50)
    for s in sizes:
        rows[s]["ratioP50VsSmallest"] = round(percentile(totals[s], 50) / base, 3) if base else None
    return {"memories": plan.sizes.get("memories", 0), "sizes": rows, "errors": _errors(bad), "cpuS": cpu.stop()}


# --- 6. SQL statements and commits per turn (needs bench.sql_probe_server) ---------------------


# A user text that the memory rules keep (preference, importance 5), made unique per turn.
MEMORY_TEXT = "以后记住：我喜欢安静的周末，第 {} 次说。"


async def _sql_pass(plan: Plan, conn: Connection, agent: str, turns: int, memory: bool) -> dict[str, Any]:
    await conn.request("POST", "/_bench/sql/reset")
    bad = []
    ttfbs: list[float] = []
    for _ in range(turns):
        text = MEMORY_TEXT.format(uuid.uuid4().hex[:8]) if memory else None
        r = await chat(plan, conn, agent, text=text)
        if not _complete(r, TTFB_DELTAS):
            bad.append(r)
        else:
            ttfbs.append(r.ttfb)
        for _ in range(200):  # until the turn's save and extraction finished (bounded: 2 s)
            idle = await conn.request("GET", "/_bench/sql/idle", keep_body=True)
            if idle.body == b"true":
                break
            await asyncio.sleep(0.01)
    counts = await conn.request("GET", "/_bench/sql", keep_body=True)
    raw: dict[str, Any] = orjson.loads(counts.body)
    per_turn = {
        phase: {k: round(v / turns, 2) for k, v in values.items() if isinstance(v, int | float)}
        for phase, values in raw["phases"].items()
    }
    return {
        "turns": turns,
        "perTurn": per_turn,
        "statements": raw["statements"],
        "serverTimings": raw.get("timings", {}),
        "clientTtfb": summary_ms(ttfbs),
        "errors": _errors(bad),
    }


async def figure_sql(plan: Plan) -> dict[str, Any]:
    """Sequential turns on the probe server: a text the memory rules skip, then one they keep."""
    turns = plan.sizes.get("sqlTurns", 20)
    await configure_mock(plan, deltas=TTFB_DELTAS, gap_ms=TTFB_GAP_MS)
    conn = plan.memchat()
    agent = plan.agents[0]
    await chat(plan, conn, agent)  # the default conversation exists from here on
    await asyncio.sleep(0.3)
    result = await _sql_pass(plan, conn, agent, turns, memory=False)
    result["withMemory"] = await _sql_pass(plan, conn, agent, turns, memory=True)
    conn.close()
    return result


FIGURES: dict[str, Callable[[Plan], Coroutine[Any, Any, dict[str, Any]]]] = {
    "ttfb": figure_ttfb,
    "gap": figure_gap,
    "throughput": figure_throughput,
    "streams": figure_streams,
    "history": figure_history,
    "sql": figure_sql,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("figure", choices=sorted(FIGURES))
    parser.add_argument("--plan", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    plan = Plan.load(args.plan)
    started = time.perf_counter()
    result = uvloop.run(FIGURES[args.figure](plan))
    result["wallS"] = round(time.perf_counter() - started, 1)
    with open(args.out, "wb") as out:
        out.write(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    log(f"{args.figure} done in {result['wallS']} s")


if __name__ == "__main__":
    main()
