"""Scores for the memory evaluation: remember-or-not and type, and the dedupe simulation."""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from bench.memory_eval.dataset import Example, memory_key

from memchat.memories.language.dedupe import duplicate_scores, find_duplicate
from memchat.memories.types import V2_MEMORY_TYPES as MEMORY_TYPES


@dataclass(frozen=True)
class PRF:
    precision: float
    recall: float
    f1: float
    support: int

    @classmethod
    def of(cls, tp: int, fp: int, fn: int) -> "PRF":
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        return cls(p, r, f, tp + fn)


@dataclass(frozen=True)
class ClassificationScores:
    remember: PRF
    per_type: dict[str, PRF]
    type_accuracy: float  # among utterances correctly remembered, the share given the right type
    predicted_positive: int


def score_predictions(examples: Sequence[Example], predicted: Mapping[str, str | None]) -> ClassificationScores:
    """`predicted` maps example id -> the type of its first candidate, None for nothing remembered."""
    tp = fp = fn = 0
    right_type = 0
    for e in examples:
        p = predicted[e.id]
        if p is not None and e.remember:
            tp += 1
            right_type += p == e.type
        elif p is not None:
            fp += 1
        elif e.remember:
            fn += 1
    per_type = {}
    for t in MEMORY_TYPES:
        t_tp = sum(1 for e in examples if e.type == t and predicted[e.id] == t)
        t_fp = sum(1 for e in examples if e.type != t and predicted[e.id] == t)
        t_fn = sum(1 for e in examples if e.type == t and predicted[e.id] != t)
        per_type[t] = PRF.of(t_tp, t_fp, t_fn)
    return ClassificationScores(
        remember=PRF.of(tp, fp, fn),
        per_type=per_type,
        type_accuracy=right_type / tp if tp else 0.0,
        predicted_positive=tp + fp,
    )


@dataclass(frozen=True)
class DedupeScores:
    threshold: float
    utterances: int
    stored: int
    distinct: int  # distinct memories the utterances are about
    duplicate_rate: float  # share of stored memories that repeat another stored one
    merge_rate: float  # of utterances whose memory was already stored, the share merged into it
    false_merge_rate: float  # of all utterances, the share merged into an unrelated memory
    update_accuracy: float  # of contradicting statements, the share that updated the earlier memory
    recall_at_k: float  # of utterances whose memory was stored, the share found among the k most similar
    k: int


def simulate_dedupe(
    examples: Sequence[Example],
    vectors: Mapping[str, npt.NDArray[np.float32]],
    threshold: float,
    center: npt.NDArray[np.float32],
    *,
    all_examples: Sequence[Example],
    k: int = 5,
) -> DedupeScores:
    """One agent's memory store fed the remembered utterances in order, merging by `find_duplicate`.

    A merge replaces the memory's content (and vector) with the new statement, as the server does.
    """
    by_id = {e.id: e for e in all_examples}
    keys: list[str] = []
    store: list[npt.NDArray[np.float32]] = []
    positives = [e for e in examples if e.remember]
    seen_before = merged_right = merged_wrong = found = 0
    contradictions = updated = 0
    for e in positives:
        key = memory_key(e, by_id)
        vec = vectors[e.id]
        matrix = np.stack(store) if store else np.zeros((0, vec.shape[0]), dtype=np.float32)
        already = key in keys
        if already:
            seen_before += 1
            top = np.argsort(-duplicate_scores(vec, matrix, center=center), kind="stable")[:k]
            found += any(keys[i] == key for i in top)
        index = find_duplicate(vec, matrix, threshold, center=center)
        if e.contradicts is not None:
            contradictions += 1
        if index is None:
            keys.append(key)
            store.append(vec)
            continue
        if keys[index] == key:
            merged_right += 1
            updated += e.contradicts is not None
        else:
            merged_wrong += 1
        keys[index] = key
        store[index] = vec
    stored = len(keys)
    return DedupeScores(
        threshold=threshold,
        utterances=len(positives),
        stored=stored,
        distinct=len({memory_key(e, by_id) for e in positives}),
        duplicate_rate=(stored - len(set(keys))) / stored if stored else 0.0,
        merge_rate=merged_right / seen_before if seen_before else 0.0,
        false_merge_rate=merged_wrong / len(positives) if positives else 0.0,
        update_accuracy=updated / contradictions if contradictions else 0.0,
        recall_at_k=found / seen_before if seen_before else 0.0,
        k=k,
    )


def tune_threshold(
    simulate: Callable[[float], DedupeScores], *, max_false_merge: float = 0.02, grid: Sequence[float] | None = None
) -> DedupeScores:
    """The highest merge rate with the false-merge rate within `max_false_merge` (ties: the higher threshold)."""
    best: DedupeScores | None = None
    for threshold in grid if grid is not None else [round(0.30 + 0.01 * i, 2) for i in range(61)]:
        scores = simulate(threshold)
        if scores.false_merge_rate > max_false_merge:
            continue
        if best is None or scores.merge_rate >= best.merge_rate:  # ties: the stricter threshold
            best = scores
    if best is None:
        raise ValueError("no threshold keeps false merges within the limit")
    return best
