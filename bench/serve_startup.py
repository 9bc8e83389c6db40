"""How long `memchat serve` takes from process start to its first /healthz 200, and the CPU it spent.

    python -m bench.serve_startup --tree /path/to/checkout-a --tree /path/to/checkout-b --runs 10

Each tree is a checkout (its `src` goes first on PYTHONPATH, so one venv serves them all). The runs
interleave (a, b, a, b, ...) so a machine that gets busier or quieter weighs on both alike. Every run
starts on a copy of one freshly migrated SQLite database with the tests' environment (tests/serve.py:
an upstream URL, no GC freeze) and polls /healthz every 10 ms. CPU is the server's user + system time
(/proc/<pid>/stat) read right after the 200.
"""

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def env_for(tree: Path, data_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": f"{tree / 'src'}:{tree}",
        "MEMCHAT_DATABASE_URL": f"sqlite+aiosqlite:///{data_dir / 'memchat.db'}",
        "MEMCHAT_DATA_DIR": str(data_dir),
        "MEMCHAT_LLM_BASE_URL": "http://127.0.0.1:9/v1",
        "MEMCHAT_JWT_SECRET": "startup-bench-secret-0123456789abcdef",
        "MEMCHAT_GC_FREEZE_ON_START": "false",
    }


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def one_start(tree: Path, template: Path, work: Path) -> tuple[float, float]:
    data_dir = work / "data"
    shutil.rmtree(data_dir, ignore_errors=True)
    shutil.copytree(template, data_dir)
    port = free_port()
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "memchat", "serve", "--port", str(port), "--no-migrate", "--log-level", "warning"],
        env=env_for(tree, data_dir),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"memchat serve ({tree}) exited with {process.returncode}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
                    if response.status == 200:
                        return time.perf_counter() - started, cpu_s(process.pid)
            except (urllib.error.URLError, ConnectionError):
                pass
            time.sleep(0.01)
    finally:
        process.terminate()
        process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, action="append", required=True, help="a checkout (repeat)")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    trees: list[Path] = [t.resolve() for t in args.tree]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        templates: dict[Path, Path] = {}
        for n, tree in enumerate(trees):
            template = work / f"template-{n}"
            template.mkdir()
            subprocess.run(
                [sys.executable, "-m", "memchat", "migrate"],
                env=env_for(tree, template),
                check=True,
                capture_output=True,
            )
            templates[tree] = template
        for tree in trees:  # warm the page cache and write the bytecode; not counted
            one_start(tree, templates[tree], work)
        results: dict[Path, list[tuple[float, float]]] = {t: [] for t in trees}
        for _ in range(args.runs):
            for tree in trees:
                results[tree].append(one_start(tree, templates[tree], work))
    for tree, runs in results.items():
        walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
        print(
            f"{tree}: to /healthz 200 mean {statistics.mean(walls):.3f} s, min {min(walls):.3f} s; "
            f"CPU mean {statistics.mean(cpus):.2f} s, min {min(cpus):.2f} s ({len(runs)} runs)"
        )


if __name__ == "__main__":
    main()
