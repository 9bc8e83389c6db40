"""Percentiles and /proc readings shared by the load generator and the runner."""

import math
import os
from collections.abc import Sequence

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile, q in [0, 100]; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * q / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def summary_ms(values_s: Sequence[float]) -> dict[str, float]:
    """p50/p90/p99/max/mean of seconds, in milliseconds."""
    ms = [v * 1000.0 for v in values_s if not math.isnan(v)]
    if not ms:
        return {"n": 0}
    return {
        "n": len(ms),
        "p50": round(percentile(ms, 50), 3),
        "p90": round(percentile(ms, 90), 3),
        "p99": round(percentile(ms, 99), 3),
        "max": round(max(ms), 3),
        "mean": round(sum(ms) / len(ms), 3),
    }


def rss_kib(pid: int) -> int:
    """Resident set size of a process (VmRSS), KiB; 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return 0
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (threads included)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


def descendants(pid: int) -> list[int]:
    """The processes below `pid`, at any depth (uvicorn's workers, granian's), as /proc lists them now."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                ppid = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop()
        found.append(child)
        todo.extend(children.get(child, []))
    return found


class CpuMeter:
    """CPU seconds used by named processes between start() and stop()."""

    def __init__(self, pids: dict[str, int]):
        self._pids = {name: pid for name, pid in pids.items() if pid}
        self._start: dict[str, float] = {}

    def start(self) -> None:
        self._start = {name: cpu_seconds(pid) for name, pid in self._pids.items()}

    def stop(self) -> dict[str, float]:
        return {name: round(cpu_seconds(pid) - self._start.get(name, 0.0), 3) for name, pid in self._pids.items()}
