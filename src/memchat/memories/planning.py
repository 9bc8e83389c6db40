"""Memory v2 extraction, compute phase: from a turn and the agent's memories to a plan of writes.

Nothing here touches the DB; the plan is applied by `memories.apply` in one short write
transaction, so no transaction is held open across an embedding or LLM call.
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from memchat.memories.llm_extraction import ArchiveOp, MemoryOp, UpdateOp
from memchat.memories.semantic import MemoryEmbeddings
from memchat.memories.types import MemoryDraft, StoredMemory
from memchat.models.memory_event import ARCHIVED, MERGED, UPDATED

log = logging.getLogger("memchat.extraction")


@dataclass(frozen=True)
class MemoryChange:
    """merged: content replaced, importance = max; updated: content (and importance) replaced; archived."""

    memory_id: str
    kind: str
    content: str | None = None
    importance: int | None = None
    vector: bytes | None = None


@dataclass
class ExtractionPlan:
    actor: str
    adds: list[MemoryDraft] = field(default_factory=list)
    changes: list[MemoryChange] = field(default_factory=list)
    # (memory id, content the vector was computed from, vector) for memories stored without one
    vectors: list[tuple[str, str, bytes]] = field(default_factory=list)
    model: str | None = None


async def fill_vectors(known: Sequence[StoredMemory], embeddings: MemoryEmbeddings, plan: ExtractionPlan) -> None:
    """Embed the memories stored without a vector of the current model, and remember to store them."""
    missing = [m for m in known if m.vector(embeddings.model) is None]
    if not missing:
        return
    for memory, vector in zip(missing, await embeddings.passages([m.content for m in missing]), strict=True):
        memory.embedding, memory.embedding_model = vector, embeddings.model
        plan.vectors.append((memory.id, memory.content, vector))


def most_similar(
    known: Sequence[StoredMemory], embeddings: MemoryEmbeddings | None, query: bytes | None, k: int
) -> list[StoredMemory]:
    """The k memories to show the LLM: by similarity when there are vectors, else the v1 order's first k."""
    if k <= 0:
        return []
    if embeddings is None or query is None:
        return list(known[:k])
    with_vectors = [(m, v) for m in known if (v := m.vector(embeddings.model)) is not None]
    if not with_vectors:
        return list(known[:k])
    scores = embeddings.scores(query, [v for _, v in with_vectors])
    order = sorted(range(len(with_vectors)), key=lambda i: -float(scores[i]))
    return [with_vectors[i][0] for i in order[:k]]


class _Deduper:
    """Semantic dedupe of new memories against the known ones and against each other."""

    def __init__(self, known: Sequence[StoredMemory], embeddings: MemoryEmbeddings | None):
        self._embeddings = embeddings
        model = embeddings.model if embeddings is not None else None
        self._rows: list[tuple[bytes, StoredMemory | None]] = [
            (v, m) for m in known if (v := m.vector(model)) is not None
        ]

    def match(self, vector: bytes | None) -> tuple[bool, StoredMemory | None]:
        """(duplicate?, the known memory it duplicates; None when it duplicates this turn's own addition)."""
        if self._embeddings is None or vector is None or not self._rows:
            return False, None
        scores = self._embeddings.scores(vector, [row[0] for row in self._rows])
        best = int(scores.argmax())
        if float(scores[best]) < self._embeddings.duplicate_threshold:
            return False, None
        return True, self._rows[best][1]

    def added(self, vector: bytes | None) -> None:
        if vector is not None:
            self._rows.append((vector, None))


async def plan_candidates(
    candidates: Sequence[MemoryDraft],
    actor: str,
    known: Sequence[StoredMemory],
    embeddings: MemoryEmbeddings | None,
    plan: ExtractionPlan | None = None,
) -> ExtractionPlan:
    """New memories from extracted candidates; one the agent already has (by similarity) is merged into it."""
    plan = plan or ExtractionPlan(actor=actor)
    vectors: list[bytes | None] = [None] * len(candidates)
    if embeddings is not None and candidates:
        await fill_vectors(known, embeddings, plan)
        vectors = list(await embeddings.passages([c.content for c in candidates]))
        plan.model = embeddings.model
    deduper = _Deduper(known, embeddings)
    merged: set[str] = set()
    for candidate, vector in zip(candidates, vectors, strict=True):
        duplicate, target = deduper.match(vector)
        if not duplicate:
            plan.adds.append(MemoryDraft(candidate.type, candidate.content, candidate.importance, vector))
            deduper.added(vector)
        elif target is not None and target.id not in merged:
            merged.add(target.id)
            plan.changes.append(MemoryChange(target.id, MERGED, candidate.content, candidate.importance, vector))
        else:
            log.info("candidate %r repeats a memory already changed this turn; dropped", candidate.content[:40])
    return plan


async def plan_operations(
    operations: Sequence[MemoryOp], known: Sequence[StoredMemory], embeddings: MemoryEmbeddings | None, actor: str
) -> ExtractionPlan:
    """The LLM's validated operations; its ADDs go through the same semantic dedupe as candidates."""
    plan = ExtractionPlan(actor=actor, model=embeddings.model if embeddings is not None else None)
    touched = {op.id for op in operations if isinstance(op, UpdateOp | ArchiveOp)}
    updates = [op for op in operations if isinstance(op, UpdateOp)]
    update_vectors: list[bytes | None] = [None] * len(updates)
    if embeddings is not None and updates:
        update_vectors = list(await embeddings.passages([op.content for op in updates]))
    for update, vector in zip(updates, update_vectors, strict=True):
        plan.changes.append(MemoryChange(update.id, UPDATED, update.content, update.importance, vector))
    for archive in operations:
        if isinstance(archive, ArchiveOp):
            plan.changes.append(MemoryChange(archive.id, ARCHIVED))
    adds = [add for add in operations if isinstance(add, MemoryDraft)]
    # an ADD may not merge into a memory this answer already updates or archives
    untouched = [m for m in known if m.id not in touched]
    return await plan_candidates(adds, actor, untouched, embeddings, plan)
