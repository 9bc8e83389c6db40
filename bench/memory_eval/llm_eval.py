"""The `llm` and `hybrid` extractors against an OpenAI-compatible endpoint (offline only, never in CI)."""

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import openai
from bench.memory_eval.dataset import Example, memory_key
from openai import AsyncOpenAI, omit

from memchat.memories.extraction.embeddings import EmbeddingExtractor
from memchat.memories.extraction.llm import (
    ArchiveOp,
    ParseResult,
    UpdateOp,
    build_extraction_messages,
    extraction_response_format,
    parse_operations,
)
from memchat.memories.language.dedupe import duplicate_scores
from memchat.memories.language.rules import extract_candidate_memories
from memchat.memories.types import MemoryDraft, StoredMemory

log = logging.getLogger("bench.memory_eval")


@dataclass
class LLMStats:
    calls: int = 0
    unusable: int = 0  # answers that fell back to the rules
    rejected_ops: int = 0


class ExtractionLLM:
    def __init__(self, base_url: str, model: str, api_key: str, timeout_s: float) -> None:
        self._client = AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=1)
        self._model = model
        self._schema_supported = True
        self.stats = LLMStats()

    async def operations(self, user_text: str, existing: Sequence[StoredMemory]) -> ParseResult:
        messages = build_extraction_messages(user_text, None, existing)
        self.stats.calls += 1
        raw: str | None = None
        try:
            if self._schema_supported:
                try:
                    raw = await self._complete(messages, with_schema=True)
                except openai.BadRequestError:
                    log.warning("endpoint refused response_format json_schema; continuing without it")
                    self._schema_supported = False
            if raw is None:
                raw = await self._complete(messages, with_schema=False)
        except openai.OpenAIError as exc:
            log.warning("extraction call failed: %s", exc)
        result = parse_operations(raw, existing)
        self.stats.unusable += not result.ok
        self.stats.rejected_ops += len(result.rejected)
        return result

    async def _complete(self, messages: list[dict[str, str]], *, with_schema: bool) -> str | None:
        response = await self._client.chat.completions.create(
            model=self._model,
            messages=cast(Any, messages),
            temperature=0,
            response_format=cast(Any, extraction_response_format()) if with_schema else omit,
        )
        content: str | None = response.choices[0].message.content
        return content


def _first_type(result: ParseResult, existing: Sequence[StoredMemory], text: str) -> str | None:
    if not result.ok:
        rule = extract_candidate_memories(text)
        return rule[0].type if rule else None
    for op in result.operations:
        if isinstance(op, MemoryDraft):
            return op.type
        if isinstance(op, UpdateOp):
            return next((m.type for m in existing if m.id == op.id), None)
    return None


async def predict_llm(llm: ExtractionLLM, examples: Sequence[Example]) -> dict[str, str | None]:
    return {e.id: _first_type(await llm.operations(e.text, []), [], e.text) for e in examples}


async def predict_hybrid(
    llm: ExtractionLLM, extractor: EmbeddingExtractor, examples: Sequence[Example]
) -> dict[str, str | None]:
    """The embeddings extractor gates: the LLM is asked only about what it would remember."""
    predicted: dict[str, str | None] = {}
    for e in examples:
        gate = await extractor.extract(e.text)
        predicted[e.id] = _first_type(await llm.operations(e.text, []), [], e.text) if gate else None
    return predicted


@dataclass(frozen=True)
class LLMDedupeScores:
    utterances: int
    stored: int
    duplicate_rate: float
    update_accuracy: float
    false_merge_rate: float


async def simulate_llm_dedupe(
    llm: ExtractionLLM,
    examples: Sequence[Example],
    vectors: Mapping[str, npt.NDArray[np.float32]],
    center: npt.NDArray[np.float32],
    *,
    all_examples: Sequence[Example],
    k: int = 5,
) -> LLMDedupeScores:
    """The store fed the remembered utterances in order; the LLM sees the k most similar memories.

    A memory's vector is that of the utterance that last wrote it (the eval embeds utterances only).
    """
    by_id = {e.id: e for e in all_examples}
    store: dict[str, tuple[str, StoredMemory, npt.NDArray[np.float32]]] = {}  # id -> (key, memory, vector)
    positives = [e for e in examples if e.remember]
    contradictions = updated = wrong = 0
    for n, e in enumerate(positives):
        key = memory_key(e, by_id)
        ids = list(store)
        existing: list[StoredMemory] = []
        if ids:
            matrix = np.stack([store[i][2] for i in ids])
            top = np.argsort(-duplicate_scores(vectors[e.id], matrix, center=center), kind="stable")[:k]
            existing = [store[ids[i]][1] for i in top]
        result = await llm.operations(e.text, existing)
        contradictions += e.contradicts is not None
        for op in result.operations:
            if isinstance(op, MemoryDraft):
                memory_id = f"mem-{n}"
                store[memory_id] = (key, StoredMemory(memory_id, op.type, op.content, op.importance), vectors[e.id])
            elif isinstance(op, UpdateOp):
                old_key, old, _ = store[op.id]
                if old_key == key:
                    updated += e.contradicts is not None
                else:
                    wrong += 1
                memory = StoredMemory(op.id, old.type, op.content, op.importance or old.importance)
                store[op.id] = (key, memory, vectors[e.id])
            elif isinstance(op, ArchiveOp):
                store.pop(op.id, None)
    keys = [v[0] for v in store.values()]
    return LLMDedupeScores(
        utterances=len(positives),
        stored=len(keys),
        duplicate_rate=(len(keys) - len(set(keys))) / len(keys) if keys else 0.0,
        update_accuracy=updated / contradictions if contradictions else 0.0,
        false_merge_rate=wrong / len(positives) if positives else 0.0,
    )
