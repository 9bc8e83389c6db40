"""Cross-validation of the pair classifier (`memchat.memories.language.relation_model`): the softmax
regression, the hidden-layer classifier and their blends, on the pairs the model is fitted on.

Five folds grouped by pair (an unrelated pair made from a labelled one, `with_unrelated`, goes with
it), each reading (`first`: the two statements' vectors; `joint`: with the pair said as one passage)
fitted with the shipped settings. It reports, per language, the share of each relation read right,
and how many unrelated pairs were read as a change. It chooses the kind of classifier; the hidden
layer's share is chosen on the change sets and the recall dialogs (bench/memory_eval/README.md).

    PYTHONPATH=src:. .venv/bin/python -m bench.memory_eval.relation_cv [--cache F.npz] [--output F.md]

Embedding the pairs takes about twelve minutes on two cores; `--cache` keeps them for a rerun.
"""

import argparse
import asyncio
import json
from pathlib import Path

import numpy as np

from memchat.memories.language import relation_model as rm
from memchat.memories.language.classifier import BlendedClassifier
from memchat.memories.language.relations import CHANGE, RELATIONS, UNRELATED

FOLDS = 5
WEIGHTS = (0.0, 0.33, 0.5, 1.0)
OUTPUT = Path(__file__).resolve().parents[1] / "results" / "relation-cv.md"


async def _matrices(cache: Path | None) -> dict[str, np.ndarray]:
    if cache is not None and cache.is_file():
        with np.load(cache) as data:
            return {k: data[k] for k in data.files}
    embedded, _ = await rm.embedded_pairs()
    arrays = {
        "first": np.asarray(embedded.rows),
        "joint": np.asarray(embedded.joint),
        "labels": np.asarray(embedded.labels),
        "ids": np.asarray([p.id for p in embedded.pairs]),
        "langs": np.asarray([p.lang for p in embedded.pairs]),
    }
    if cache is not None:
        np.savez(cache, **arrays)
    return arrays


def folds_of(groups: np.ndarray, seed: int = 0) -> np.ndarray:
    names = np.unique(groups)
    order = np.random.default_rng(seed).permutation(len(names))
    fold = {str(names[i]): k % FOLDS for k, i in enumerate(order)}
    return np.asarray([fold[str(g)] for g in groups])


def cross_validated(x: np.ndarray, labels: np.ndarray, folds: np.ndarray) -> dict[float, np.ndarray]:
    """Each pair's probabilities from the models fitted on the other folds, per hidden-layer share."""
    linear_p = np.zeros((len(labels), len(RELATIONS)), dtype=np.float32)
    hidden_p = np.zeros_like(linear_p)
    for k in range(FOLDS):
        train, test = folds != k, folds == k
        y = labels[train].tolist()
        blend = rm.fit_blend(x[train], y)
        linear_p[test] = blend.linear.predict_proba(x[test])
        hidden_p[test] = blend.hidden.predict_proba(x[test])
    return {w: BlendedClassifier.mix(linear_p, hidden_p, w) for w in WEIGHTS}


def scores(p: np.ndarray, labels: np.ndarray, langs: np.ndarray) -> dict[str, object]:
    read = p.argmax(axis=1)
    out: dict[str, object] = {}
    for lang in ("zh", "en"):
        mine = langs == lang
        out[lang] = {
            relation: round(float(np.mean(read[mine & (labels == i)] == i)), 3) for i, relation in enumerate(RELATIONS)
        }
    unrelated, change = RELATIONS.index(UNRELATED), RELATIONS.index(CHANGE)
    out["unrelated_read_as_change"] = int(np.sum((labels == unrelated) & (read == change)))
    return out


def report(results: dict[str, dict[float, dict[str, object]]], counts: dict[str, int]) -> str:
    lines = [
        "# The pair classifier, cross-validated",
        "",
        f"{FOLDS} folds grouped by pair over the {counts['pairs']} pairs the model is fitted on "
        f"({counts['unrelated']} unrelated, {counts['unrelated_of']} of them drawn, `with_unrelated`). Share of each "
        "relation read right; hidden-layer share 0 is the softmax regression alone, 1 the hidden layer alone.",
        "",
        "Command: `PYTHONPATH=src:. .venv/bin/python -m bench.memory_eval.relation_cv`",
        "",
    ]
    for reading, by_weight in results.items():
        lines += [f"## {reading} reading", ""]
        head = "| hidden-layer share | " + " | ".join(f"{lang} {r}" for lang in ("zh", "en") for r in RELATIONS)
        lines += [head + " | unrelated read as change |", "|---" * (2 * len(RELATIONS) + 2) + "|"]
        for weight, s in by_weight.items():
            cells = [f"{s[lang][r]:.3f}" for lang in ("zh", "en") for r in RELATIONS]  # type: ignore[index]
            lines.append(f"| {weight:g} | " + " | ".join(cells) + f" | {s['unrelated_read_as_change']} |")
        lines.append("")
    return "\n".join(lines)


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    m = await _matrices(args.cache)
    labels, langs = m["labels"], m["langs"]
    ids = m["ids"].astype(str)
    folds = folds_of(np.asarray([i.split("~")[0] for i in ids]))
    results = {
        reading: {w: scores(p, labels, langs) for w, p in cross_validated(m[reading], labels, folds).items()}
        for reading in ("first", "joint")
    }
    drawn = sum("~" in i for i in ids)
    counts = {"pairs": len(labels), "unrelated": int(np.sum(labels == 0)), "unrelated_of": drawn}
    args.output.write_text(report(results, counts), encoding="utf-8")
    args.output.with_suffix(".json").write_text(json.dumps({"results": results, **counts}, indent=1), encoding="utf-8")
    print(report(results, counts))


if __name__ == "__main__":
    asyncio.run(main())
