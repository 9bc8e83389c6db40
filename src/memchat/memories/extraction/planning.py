"""Memory v2 extraction, compute phase: from a turn and the agent's memories to a plan of writes.

Nothing here touches the DB; the plan is applied by `memories.apply` in one short write
transaction, so no transaction is held open across an embedding or LLM call.
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from memchat.memories.extraction.changes import Changes, PairRead, judge_candidate, supersedes_for_update
from memchat.memories.extraction.llm import ArchiveOp, MemoryOp, UpdateOp
from memchat.memories.extraction.pairs import candidate_read
from memchat.memories.language.rewrite import with_new_value
from memchat.memories.language.semantic import MemoryEmbeddings
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
    event_date: str | None = None


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
    *,
    changes: Changes | None = None,
) -> ExtractionPlan:
    """New memories from extracted candidates; one the agent already has is merged into it.

    Without `changes` (or in its `merge` mode) "already has" means similar enough by vectors. In
    `supersede` mode each candidate is judged against every active memory (`memories.changes`):
    a paraphrase is merged, a change of mind supersedes the old memory, anything else is added.
    """
    plan = plan or ExtractionPlan(actor=actor)
    vectors: list[bytes | None] = [None] * len(candidates)
    if embeddings is not None and candidates:
        await fill_vectors(known, embeddings, plan)
        vectors = list(await embeddings.passages([c.content for c in candidates]))
        plan.model = embeddings.model
    if changes is not None and changes.supersede:
        if embeddings is not None and candidates:
            await embeddings.prepare_topics()
        pairs = zip(candidates, vectors, strict=True)
        reads = [await candidate_read(embeddings, c.content, v, known) for c, v in pairs]
        judge_candidates(candidates, vectors, known, plan, changes, reads)
        rewrites = [i for i, c in enumerate(plan.changes) if c.kind == UPDATED and c.vector is None and c.content]
        if embeddings is not None and rewrites:
            texts = [plan.changes[i].content or "" for i in rewrites]
            for i, rewritten in zip(rewrites, await embeddings.passages(texts), strict=True):
                plan.changes[i] = replace(plan.changes[i], vector=rewritten)
        return plan
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


def judge_candidates(
    candidates: Sequence[MemoryDraft],
    vectors: Sequence[bytes | None],
    known: Sequence[StoredMemory],
    plan: ExtractionPlan,
    changes: Changes,
    reads: Sequence[PairRead],
) -> None:
    """`supersede` mode: add, merge or supersede each candidate (vectors and readings already made:
    `pairs.candidate_read`)."""
    merged: set[str] = set()
    added: list[MemoryDraft] = []
    for candidate, vector, read in zip(candidates, vectors, reads, strict=True):
        verdict = judge_candidate(candidate, known, added, changes, read)
        if verdict.drop:
            log.info("candidate %r repeats this turn's own addition; dropped", candidate.content[:40])
        elif verdict.merge_into is not None:
            if verdict.merge_into in merged:
                continue
            merged.add(verdict.merge_into)
            plan.changes.append(
                MemoryChange(
                    verdict.merge_into, MERGED, candidate.content, candidate.importance, vector, verdict.event_date
                )
            )
        else:
            supersedes = _rewrite_instead(candidate, verdict.supersedes, known, plan, merged)
            draft = replace(candidate, vector=vector, event_date=verdict.event_date, supersedes=supersedes)
            plan.adds.append(draft)
            added.append(draft)


def _rewrite_instead(
    candidate: MemoryDraft,
    supersedes: tuple[str, ...],
    known: Sequence[StoredMemory],
    plan: ExtractionPlan,
    done: set[str],
) -> tuple[str, ...]:
    """The memories a change supersedes, less those it rewrites: a memory that holds more than the
    value the change replaces keeps the rest, with the new value in the old one's place
    (`rewrite.with_new_value`; the change is still stored as said). A rewrite that would say what
    another memory says already supersedes as before."""
    by_id = {m.id: m for m in known}
    taken = {m.content for m in known} | {a.content for a in plan.adds} | {candidate.content}
    left: list[str] = []
    for memory_id in supersedes:
        old = by_id.get(memory_id)
        rewritten = with_new_value(old.content, candidate.content) if old is not None else None
        if rewritten is None or rewritten in taken or memory_id in done:
            left.append(memory_id)
            continue
        done.add(memory_id)
        taken.add(rewritten)
        plan.changes.append(MemoryChange(memory_id, UPDATED, rewritten))
    return tuple(left)


async def plan_operations(
    operations: Sequence[MemoryOp],
    known: Sequence[StoredMemory],
    embeddings: MemoryEmbeddings | None,
    actor: str,
    *,
    changes: Changes | None = None,
) -> ExtractionPlan:
    """The LLM's validated operations; its ADDs go through the same semantic dedupe as candidates.

    In `supersede` mode an UPDATE that changes the memory's mind (judged as for candidates) becomes
    a new memory superseding the old one, and an ARCHIVE next to an ADD that contradicts the
    archived memory becomes that ADD superseding it.
    """
    plan = ExtractionPlan(actor=actor, model=embeddings.model if embeddings is not None else None)
    supersede = changes is not None and changes.supersede
    by_id = {m.id: m for m in known}
    touched = {op.id for op in operations if isinstance(op, UpdateOp | ArchiveOp)}
    adds = [add for add in operations if isinstance(add, MemoryDraft)]
    updates = [op for op in operations if isinstance(op, UpdateOp)]
    update_vectors: list[bytes | None] = [None] * len(updates)
    if embeddings is not None and updates:
        update_vectors = list(await embeddings.passages([op.content for op in updates]))
    for update, vector in zip(updates, update_vectors, strict=True):
        old = by_id.get(update.id)
        if supersede and old is not None and supersedes_for_update(update.content, old):
            importance = update.importance if update.importance is not None else old.importance
            adds.append(MemoryDraft(old.type, update.content, importance, supersedes=(old.id,)))
            continue
        plan.changes.append(MemoryChange(update.id, UPDATED, update.content, update.importance, vector))
    for archive in operations:
        if not isinstance(archive, ArchiveOp):
            continue
        old = by_id.get(archive.id)
        replacing = next(
            (i for i, a in enumerate(adds) if old and supersede and supersedes_for_update(a.content, old)), None
        )
        if replacing is not None:
            adds[replacing] = replace(adds[replacing], supersedes=(*adds[replacing].supersedes, archive.id))
        else:
            plan.changes.append(MemoryChange(archive.id, ARCHIVED))
    # an ADD may not merge into a memory this answer already updates or archives
    untouched = [m for m in known if m.id not in touched]
    return await plan_candidates(adds, actor, untouched, embeddings, plan, changes=changes)
