"""Summarises a py-spy `--format raw` profile (collapsed stacks): where the server's time goes.

    python -m bench.profile_summary bench/results/profiles/sqlite-throughput.txt [--top 30] [--match TEXT]

Prints the share of samples per package (by the innermost frame), the functions with the most
self time, and the functions with the most inclusive time (a frame counted once per stack).
--match keeps only the stacks that contain TEXT (e.g. `run_chat_turn`).
"""

import argparse
import re
from collections import Counter
from pathlib import Path

_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^:()]*)(?::(?P<line>\d+))?\)$")


def _parse(path: Path, match: str | None) -> list[tuple[list[str], int]]:
    stacks = []
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        if match and match not in stack:
            continue
        stacks.append((stack.split(";"), int(count)))
    return stacks


def _name(frame: str) -> str:
    m = _FRAME.match(frame)
    if not m:
        return frame
    return f"{m['func']} ({m['file']})"


def _package(frame: str) -> str:
    m = _FRAME.match(frame)
    file = m["file"] if m else frame
    parts = file.replace("\\", "/").split("/")
    if "site-packages" in parts:
        return parts[parts.index("site-packages") + 1]
    if file.startswith("<"):
        return file
    return parts[0] if len(parts) > 1 else "stdlib:" + parts[0]


def summarise(path: Path, top: int, match: str | None) -> str:
    stacks = _parse(path, match)
    total = sum(c for _, c in stacks) or 1
    self_time: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    packages: Counter[str] = Counter()
    for frames, count in stacks:
        self_time[_name(frames[-1])] += count
        packages[_package(frames[-1])] += count
        for name in {_name(f) for f in frames}:
            inclusive[name] += count
    out = [f"{path}: {total} samples" + (f" in stacks containing {match!r}" if match else "")]
    out.append("\nby package (innermost frame):")
    out += [f"  {100 * c / total:5.1f}%  {name}" for name, c in packages.most_common(top)]
    out.append("\nself time:")
    out += [f"  {100 * c / total:5.1f}%  {name}" for name, c in self_time.most_common(top)]
    out.append("\ninclusive time:")
    out += [f"  {100 * c / total:5.1f}%  {name}" for name, c in inclusive.most_common(top)]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profile", type=Path)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--match")
    args = parser.parse_args()
    print(summarise(args.profile, args.top, args.match))


if __name__ == "__main__":
    main()
