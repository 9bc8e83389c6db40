"""What metrics and tracing cost a turn: added time to first byte, A/B/C interleaved in one run.

    .venv/bin/python -m bench.observability_cost [--pairs 300] [--db sqlite|postgresql]

Starts the paced mock upstream and three `memchat serve` processes on fresh databases: `off`
(MEMCHAT_METRICS=false, no tracing), `metrics` (the default: metrics on) and `tracing` (metrics
on and OTEL_TRACES_EXPORTER=otlp to a local sink that accepts every export). Each round sends one
turn to each server (in a rotating order) and one request straight to the mock; each server's
added time to first byte is its TTFB less that round's direct TTFB. The headline is the p50 of
the per-round differences metrics - off and tracing - metrics. Writes
bench/results/observability-cost.{json,md}.
"""

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bench.loadgen import TTFB_DELTAS, TTFB_GAP_MS, _complete, chat, configure_mock, direct
from bench.run import (
    MEMCHAT,
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
from bench.stats import summary_ms

VARIANTS = ("off", "metrics", "tracing")


class _Sink(BaseHTTPRequestHandler):
    """An OTLP/HTTP endpoint that takes every export and keeps nothing but their count."""

    exports = 0

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        _Sink.exports += 1
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *_args: Any) -> None:
        pass


def _variant_env(variant: str, base: dict[str, str], sink_url: str) -> dict[str, str]:
    env = {k: v for k, v in base.items() if not k.startswith("OTEL_")}
    if variant == "off":
        env["MEMCHAT_METRICS"] = "false"
    if variant == "tracing":
        env.update({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": sink_url})
    return env


async def _rounds(servers: dict[str, tuple[str, str, str]], mock_url: str, pairs: int, max_s: float) -> dict[str, Any]:
    from bench.loadgen import Plan

    plans = {
        name: Plan(url, mock_url, token, [agent], {}, 0, 0, False, {}) for name, (url, token, agent) in servers.items()
    }
    any_plan = next(iter(plans.values()))
    await configure_mock(any_plan, deltas=TTFB_DELTAS, gap_ms=TTFB_GAP_MS)
    conns = {name: plan.memchat() for name, plan in plans.items()}
    mock = any_plan.mock()
    for _ in range(10):  # warm-up
        for name, plan in plans.items():
            await chat(plan, conns[name], plan.agents[0])
        await direct(mock)
    added: dict[str, list[float]] = {name: [] for name in plans}
    diffs: dict[str, list[float]] = {"metrics - off": [], "tracing - metrics": [], "tracing - off": []}
    bad = 0
    deadline = time.perf_counter() + max_s
    order = list(plans)
    for _ in range(pairs):
        if time.perf_counter() > deadline:
            break
        order = order[1:] + order[:1]  # rotate so drift favours no variant
        ttfb: dict[str, float] = {}
        responses = {}
        rd = await direct(mock)
        for name in order:
            responses[name] = await chat(plans[name], conns[name], plans[name].agents[0])
            await asyncio.sleep(0.005)
        if not _complete(rd, TTFB_DELTAS) or not all(_complete(r, TTFB_DELTAS) for r in responses.values()):
            bad += 1
            continue
        for name, response in responses.items():
            ttfb[name] = response.ttfb - rd.ttfb
            added[name].append(ttfb[name])
        diffs["metrics - off"].append(ttfb["metrics"] - ttfb["off"])
        diffs["tracing - metrics"].append(ttfb["tracing"] - ttfb["metrics"])
        diffs["tracing - off"].append(ttfb["tracing"] - ttfb["off"])
    for conn in (*conns.values(), mock):
        conn.close()
    return {
        "rounds": len(diffs["metrics - off"]),
        "incomplete": bad,
        "addedTtfb": {name: summary_ms(values) for name, values in added.items()},
        "pairedDifference": {name: summary_ms(values) for name, values in diffs.items()},
        "pairedDifferenceMeanMs": {name: statistics.fmean(v) * 1000 if v else None for name, v in diffs.items()},
    }


def _markdown(result: dict[str, Any], command: str) -> str:
    lines = [
        "# What metrics and tracing cost a turn",
        "",
        f"`{command}` ({result['db']}, {result['rounds']} rounds, {result['incomplete']} incomplete; "
        f"{result['machine'].get('cpu', '')}, load {result['machine'].get('loadAvgAtStart', '')}; "
        f"{result['otlpExports']} OTLP exports received from the tracing server)",
        "",
        "Added time to first byte: memchat's TTFB less the same round's direct TTFB to the mock (ms).",
        "",
        "| server | p50 | p90 | p99 |",
        "| --- | --- | --- | --- |",
    ]
    for name, s in result["addedTtfb"].items():
        lines.append(f"| {name} | {s.get('p50', 0):.3f} | {s.get('p90', 0):.3f} | {s.get('p99', 0):.3f} |")
    lines += ["", "Per-round differences (ms):", "", "| difference | p50 | mean |", "| --- | --- | --- |"]
    for name, s in result["pairedDifference"].items():
        mean = result["pairedDifferenceMeanMs"][name]
        lines.append(f"| {name} | {s.get('p50', 0):.3f} | {mean:.3f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--max-s", type=float, default=240.0)
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    args = parser.parse_args()
    sink = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    sink_url = f"http://127.0.0.1:{sink.server_address[1]}"
    with tempfile.TemporaryDirectory(prefix="memchat-obs-bench-") as tmp, ExitStack() as stack:
        workdir = Path(tmp)
        mock_url, mock = stack.enter_context(mock_upstream(workdir))
        servers: dict[str, tuple[str, str, str]] = {}
        for variant in VARIANTS:
            vdir = workdir / variant
            vdir.mkdir()
            url = stack.enter_context(database(args.db, vdir))
            env = _variant_env(variant, memchat_env(url, mock_url, vdir), sink_url)
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            serve = [
                MEMCHAT,
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--log-level",
                "warning",
                "--migrate",
            ]
            server = stack.enter_context(process(serve, env=env, cwd=vdir, log_path=vdir / "memchat.log"))
            wait_http(f"{base}/healthz", proc=server)
            api = Api(base)
            api.signup()
            servers[variant] = (base, api.token, api.create_agent(f"bench {variant}"))
            api.close()
        log(f"{args.pairs} rounds over {', '.join(VARIANTS)} ...")
        result = asyncio.run(_rounds(servers, mock_url, args.pairs, args.max_s))
    sink.shutdown()
    command = "python -m bench.observability_cost " + " ".join(sys.argv[1:])
    result.update({"otlpExports": _Sink.exports, "db": args.db, "command": command.strip(), "machine": machine()})
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "observability-cost.json").write_text(json.dumps(result, indent=2))
    (RESULTS / "observability-cost.md").write_text(_markdown(result, command.strip()))
    print(_markdown(result, command.strip()))


if __name__ == "__main__":
    main()
