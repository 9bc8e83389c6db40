"""The benchmark's report: the markdown table (figure, memchat, direct, ratio, target) and the PNG plots."""

import math
from pathlib import Path
from typing import Any

DB_TITLES = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}


def _num(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _ratio(a: Any, b: Any) -> str:
    if not isinstance(a, int | float) or not isinstance(b, int | float) or not b:
        return "–"
    return f"{a / b:.2f}x"


def _met(ok: bool | None) -> str:
    return "–" if ok is None else ("yes" if ok else "**no**")


Row = tuple[str, str, str, str, str, str, str]


def _rows(r: dict[str, Any]) -> list[Row]:
    rows: list[Row] = []
    if "ttfb" in r:
        t = r["ttfb"]
        for q, target in (("p50", 3.0), ("p99", 10.0)):
            added = t["addedPaired"].get(q)
            rows.append(
                (
                    f"1. time to first byte {q} (ms), paced reply",
                    _num(t["memchat"].get(q)),
                    _num(t["direct"].get(q)),
                    _ratio(t["memchat"].get(q), t["direct"].get(q)),
                    f"+{_num(added)}",
                    f"≤ +{target:g} ms",
                    _met(added <= target if added is not None else None),
                )
            )
        burst = t.get("burst")
        if burst:
            added = burst["addedPaired"].get("p50")
            rows.append(
                (
                    "1. time to first byte p50 (ms), instant 64-delta reply",
                    _num(burst["memchat"].get("p50")),
                    _num(burst["direct"].get("p50")),
                    _ratio(burst["memchat"].get("p50"), burst["direct"].get("p50")),
                    f"+{_num(added)}",
                    "",
                    "–",
                )
            )
    if "gap" in r:
        g = r["gap"]
        for q, gap_target in (("p50", None), ("p99", 1.0)):
            added = g["added"].get(q)
            rows.append(
                (
                    f"2. inter-chunk gap {q} (ms, paced {g['gapMs']:g} ms)",
                    _num(g["memchat"].get(q)),
                    _num(g["direct"].get(q)),
                    _ratio(g["memchat"].get(q), g["direct"].get(q)),
                    f"{added:+.2f}" if added is not None else "–",
                    f"≤ +{gap_target:g} ms" if gap_target else "",
                    _met(added <= gap_target if gap_target and added is not None else None),
                )
            )
    if "throughput" in r:
        for level in r["throughput"]["levels"]:
            c = level["concurrency"]
            m, d = level["memchat"], level["direct"]
            rows.append(
                (
                    f"3. full turns/s, instant upstream, concurrency {c}",
                    _num(m["turnsPerS"], 1) + (f" ({m['failed']} failed)" if m["failed"] else ""),
                    _num(d["turnsPerS"], 1),
                    _ratio(m["turnsPerS"], d["turnsPerS"]),
                    f"p50 {_num(m['latency'].get('p50'), 1)} ms",
                    "≥ 300/s" if c == 64 else "",
                    _met(m["turnsPerS"] >= 300) if c == 64 else "–",
                )
            )
    if "streams" in r:
        s = r["streams"]
        m, d = s["maxCleanStreams"]["memchat"], s["maxCleanStreams"]["direct"]
        tested = max((row["streams"] for row in s["levels"]["memchat"]), default=0)
        rows.append(
            (
                f"4. concurrent paced streams, none dropped or late (> {s['lateThresholdMs']:g} ms)",
                _num(m) + ("" if tested > m else " (highest tried)"),
                _num(d),
                _ratio(m, d),
                "",
                "≥ 1,000",
                _met(m >= 1000),
            )
        )
        rows.append(
            (
                "4. server memory per open stream (KiB RSS)",
                _num(s["serverKiBPerOpenStream"], 1),
                "",
                "",
                "",
                "",
                "–",
            )
        )
    if "history" in r:
        h = r["history"]["sizes"]
        sizes = sorted(h, key=int)
        for size in sizes:
            ratio = h[size]["ratioP50VsSmallest"]
            last = size == sizes[-1]
            rows.append(
                (
                    f"5. turn latency p50, {int(size):,} messages + {r['history']['memories']:,} memories (ms)",
                    _num(h[size]["latency"].get("p50")),
                    "",
                    f"{ratio:.2f}x" if ratio else "–",
                    f"p99 {_num(h[size]['latency'].get('p99'))}",
                    "≤ 1.2x of 10" if last else "",
                    _met(ratio <= 1.2) if last and ratio else "–",
                )
            )
    if "sql" in r:
        rows += _sql_rows(r["sql"]["perTurn"], "")
        if "withMemory" in r["sql"]:
            rows += _sql_rows(r["sql"]["withMemory"]["perTurn"], ", text that makes a memory")
    return rows


def _sql_rows(p: dict[str, Any], label: str) -> list[Row]:
    rows: list[Row] = []
    if p:
        req, save = p.get("request", {}), p.get("replySave", {})
        after = {
            k: p.get("afterReply", {}).get(k, 0) + p.get("extractionInline", {}).get(k, 0)
            for k in ("statements", "commits")
        }
        statements = req.get("statements", 0) + save.get("statements", 0)
        commits = req.get("writeCommits", 0) + save.get("writeCommits", 0)
        all_commits = req.get("commits", 0) + save.get("commits", 0)
        rows.append(
            (
                f"6. SQL statements per turn, response path{label}",
                _num(float(statements), 1),
                "",
                "",
                f"request {_num(float(req.get('statements', 0)), 1)}"
                f" + save {_num(float(save.get('statements', 0)), 1)}",
                "fixed, small",
                "–",
            )
        )
        rows.append(
            (
                f"6. write commits per turn, response path{label}",
                _num(float(commits), 1),
                "",
                "",
                f"{_num(float(all_commits), 1)} incl. read-only",
                "≤ 2",
                _met(commits <= 2),
            )
        )
        rows.append(
            (
                f"6. SQL statements per turn for memory extraction{label}",
                _num(float(after.get("statements", 0)), 1),
                "",
                "",
                f"inline {_num(float(p.get('extractionInline', {}).get('statements', 0)), 1)}"
                f" + background {_num(float(p.get('afterReply', {}).get('statements', 0)), 1)}",
                "not counted",
                "–",
            )
        )
    return rows


def markdown(document: dict[str, Any]) -> str:
    m = document["machine"]
    variant = document.get("variant")
    lines = [
        "# memchat benchmark" + (f" — experimental variant `{variant}` (bench/variants.py)" if variant else ""),
        "",
        f"{document['startedAt']}, {document['mode']} run, {document['wallS']} s. Machine: {m['cpu']}, "
        f"{m['cores']} cores, Python {m['python']}, load average at start {m['loadAvgAtStart']}. "
        "memchat, the mock upstream and the load generator share these cores.",
        "",
        "`direct` is the same request sent straight to the mock upstream in the same run; `added` is "
        "memchat minus direct (time to first byte: per pair, then the percentile). Ratios are the headline: "
        "the machine is shared and noisy.",
    ]
    for kind, r in document["results"].items():
        lines += [
            "",
            f"## {DB_TITLES.get(kind, kind)}",
            "",
            "| figure | memchat | direct | ratio | added / detail | target | met |",
            "| --- | ---: | ---: | ---: | ---: | --- | --- |",
        ]
        lines += ["| " + " | ".join(row) + " |" for row in _rows(r)]
        timings = r.get("sql", {}).get("serverTimings", {})
        if timings:
            lines += [
                "",
                "Where a sequential turn's time goes, measured inside the server (bench.sql_probe_server), ms:",
                "",
                "| step | p50 | p90 | max |",
                "| --- | ---: | ---: | ---: |",
            ]
            for name, t in timings.items():
                if t.get("n"):
                    lines.append(f"| {name} | {_num(t['p50'])} | {_num(t['p90'])} | {_num(t['max'])} |")
            client = r["sql"].get("clientTtfb", {})
            if client.get("n"):
                lines.append(
                    f"| client: time to first byte (same turns) | {_num(client['p50'])} | "
                    f"{_num(client['p90'])} | {_num(client['max'])} |"
                )
        errors = _collect_errors(r)
        if errors:
            lines += ["", "Errors seen: " + "; ".join(f"{k} ×{v}" for k, v in errors.items())]
        cpu = _cpu_line(r)
        if cpu:
            lines += ["", cpu]
    lines.append("")
    return "\n".join(lines)


def _collect_errors(r: dict[str, Any]) -> dict[str, int]:
    out: dict[str, int] = {}

    def add(errors: dict[str, int]) -> None:
        for k, v in errors.items():
            out[k[:100]] = out.get(k[:100], 0) + v

    for name in ("ttfb", "gap", "history", "sql"):
        if name in r:
            add(r[name].get("errors", {}))
    if "burst" in r.get("ttfb", {}):
        add(r["ttfb"]["burst"].get("errors", {}))
    for level in r.get("throughput", {}).get("levels", []):
        add(level["memchat"].get("errors", {}))
        add(level["direct"].get("errors", {}))
    return out


def _cpu_line(r: dict[str, Any]) -> str:
    for level in r.get("throughput", {}).get("levels", []):
        if level["concurrency"] == 64:
            cpu = level["memchat"]["cpuS"]
            turns = level["memchat"]["turnsPerS"] * level["memchat"].get("windowS", r["throughput"]["durationS"])
            if turns:
                per = {k: v * 1000.0 / turns for k, v in cpu.items()}
                return (
                    "CPU per turn at concurrency 64: "
                    + ", ".join(f"{k} {v:.2f} ms" for k, v in per.items())
                    + " (warm-up included, so an upper bound)."
                )
    return ""


def plots(document: dict[str, Any], out_dir: Path, prefix: str = "") -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written: list[Path] = []
    results = document["results"]
    if any("throughput" in r for r in results.values()):
        fig, (ax_lat, ax_tps) = plt.subplots(1, 2, figsize=(11, 4.2))
        for kind, r in results.items():
            if "throughput" not in r:
                continue
            levels = r["throughput"]["levels"]
            cs = [lv["concurrency"] for lv in levels]
            title = DB_TITLES.get(kind, kind)
            for side, style in (("memchat", "-o"), ("direct", "--s")):
                if side == "direct" and kind != next(iter(results)):
                    continue  # one direct line is enough
                label = f"memchat ({title})" if side == "memchat" else "direct to mock"
                ax_lat.plot(cs, [lv[side]["latency"].get("p50") for lv in levels], style, label=f"{label} p50")
                ax_lat.plot(
                    cs, [lv[side]["latency"].get("p99") for lv in levels], style, alpha=0.45, label=f"{label} p99"
                )
                ax_tps.plot(cs, [lv[side]["turnsPerS"] for lv in levels], style, label=label)
        for ax in (ax_lat, ax_tps):
            ax.set_xscale("log", base=2)
            ax.set_xticks([1, 16, 64, 256], ["1", "16", "64", "256"])
            ax.set_xlabel("concurrent clients")
            ax.grid(alpha=0.3)
        ax_lat.set_yscale("log")
        ax_lat.set_ylabel("full turn latency (ms)")
        ax_lat.set_title("Turn latency vs concurrency (instant upstream)")
        ax_tps.set_ylabel("full turns per second")
        ax_tps.set_yscale("log")
        ax_tps.axhline(300, color="grey", linestyle=":", label="target at 64")
        ax_tps.set_title("Throughput vs concurrency")
        ax_lat.legend(fontsize=7)
        ax_tps.legend(fontsize=7)
        fig.tight_layout()
        path = out_dir / f"{prefix}latency_vs_concurrency.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    if any("history" in r for r in results.values()):
        fig, ax = plt.subplots(figsize=(6.5, 4.2))
        for kind, r in results.items():
            if "history" not in r:
                continue
            h = r["history"]["sizes"]
            sizes = sorted(h, key=int)
            xs = [int(s) for s in sizes]
            title = DB_TITLES.get(kind, kind)
            ax.plot(xs, [h[s]["latency"].get("p50") for s in sizes], "-o", label=f"{title} p50")
            ax.plot(xs, [h[s]["latency"].get("p99") for s in sizes], "--o", alpha=0.5, label=f"{title} p99")
        ax.set_xscale("log")
        ax.set_xlabel("stored messages in the conversation (agent has 10,000 memories)")
        ax.set_ylabel("full turn latency (ms)")
        ax.set_ylim(bottom=0)
        ax.set_title("Turn latency vs history size (sequential)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = out_dir / f"{prefix}latency_vs_history.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written
