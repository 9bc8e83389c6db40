"""The markdown of a `bench.ab` run: one table per figure, the machine and the command on top."""

from typing import Any


def markdown(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    lines = [
        f"# {doc['name']}: {' / '.join(doc['sides'])} on {doc['db']}, interleaved",
        "",
        f"{doc['startedAt']}. Machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}; load average at "
        f"start {m['loadAvgAtStart']}. The servers, the mock upstream, PostgreSQL and this harness share the cores.",
        "",
        f"Command: `{doc['command']}`",
        "",
        "Sides: " + "; ".join(f"`{n}` = {d}" for n, d in doc["sideArgs"].items()),
        "",
    ]
    if doc.get("texts"):
        lines += [f"Throughput turns say {doc['texts']}.", ""]
    t = doc.get("ttfb")
    if t:
        lines += [
            f"## Added time to first byte ({t['rounds']} rounds, paced 8-delta reply; load {t['loadAvg']})",
            "",
            "| side | added p50 (ms) | added p99 (ms) | difference to first side p50 / p99 (ms) |",
            "| --- | ---: | ---: | ---: |",
        ]
        for name, s in t["addedTtfb"].items():
            d = t["differenceToFirst"].get(name)
            diff = f"{d['p50']:+.2f} / {d['p99']:+.2f}" if d else "–"
            lines.append(f"| {name} | {s['p50']:+.2f} | {s['p99']:+.2f} | {diff} |")
        lines.append("")
    tp = doc.get("throughput")
    if tp:
        lines += [
            f"## Full turns/s at concurrency {tp['concurrency']}, instant 64-delta replies "
            f"({len(tp['summary']['direct']['turnsPerS'])} rounds of {tp['windowS']} s windows; load {tp['loadAvg']})",
            "",
            "| side | turns/s per window | median | ratio to first (median of per-round ratios) | turns per server "
            "CPU-s (drain included) | drain after the window (s) | mock CPU ms/turn | harness CPU ms/turn "
            "| PostgreSQL + Redis CPU ms/turn | TTFB p50 (ms) | failed |",
            "| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for name, s in tp["summary"].items():
            per = " / ".join(f"{x:.0f}" for x in s["turnsPerS"])
            drains = " / ".join(str(d) for d in s["drainS"])
            lines.append(
                f"| {name} | {per} | {s['median']:.1f} | {s.get('ratioToFirst', '–')} | "
                f"{s['turnsPerServerCpuS'] or '–'} | {drains} | {s['mockCpuMsPerTurn']} | {s['harnessCpuMsPerTurn']} | "
                f"{s.get('servicesCpuMsPerTurn', '–')} | {s['ttfbP50Ms']:.1f} | {s['failed']} |"
            )
        lines.append("")
    st = doc.get("streams")
    if st:
        lines += [
            f"## {st['streams']} paced streams at once ({st['deltasPerStream']} deltas 20 ms apart; late: over 50 ms "
            f"behind schedule; load {st['loadAvg']})",
            "",
            "| side | peak open | dropped | late chunks | worst lateness (ms) | all open after (s) "
            "| mock's own worst lag (ms) | inside: delta batches over 50 ms | inside: loop ticks over 50 ms late |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for name, r in st["sides"].items():
            lag = r.get("mock", {}).get("maxLagMs", "–")
            ins = r.get("inside")
            batches = f"{ins['deltaBatchesOver50ms']} of {ins['deltaBatches']}" if ins else "–"
            ticks = f"{ins['loopTicksOver50ms']} of {ins['loopTicks']}" if ins else "–"
            lines.append(
                f"| {name} | {r['peakOpen']} | {r['dropped']} | {r['lateChunks']} | {r['worstLatenessMs']} | "
                f"{r['allOpenAfterS']} | {lag} | {batches} | {ticks} |"
            )
        lines.append("")
    return "\n".join(lines)
