"""The memory strategy, resolved once at start-up from the settings: what a turn reads, injects and extracts.

The chat turn asks it three things: which memories to read inside commit point 1
(`read_for_prompt`), which of them go into the prompt (`recall`), and whether extraction runs
inline right after the reply is stored (the v1 rules) or in the background (`inline`).
"""

import asyncio
import logging
import re
from dataclasses import dataclass, replace
from datetime import date
from typing import Literal

from sqlalchemy.engine import Connection

from memchat.clock import now_ms
from memchat.llm.client import LLMClient
from memchat.memories import repository
from memchat.memories.language.dates import local_day
from memchat.memories.language.rules import extract_candidate_memories
from memchat.memories.language.semantic import MemoryEmbeddings, recall_scores
from memchat.memories.recall import NEAR_EVENT_BOOST, RecallCandidate, rank_memories
from memchat.memories.types import MemoryDraft, StoredMemory
from memchat.models.message import EXTRACTION_DONE, EXTRACTION_PENDING
from memchat.observability import metrics

_CJK = re.compile(r"[\u4e00-\u9fff]")

log = logging.getLogger("memchat.memories")

Extractor = Literal["rules", "embeddings", "llm", "hybrid"]
Recall = Literal["v1", "ranked"]
Changes = Literal["merge", "supersede"]

NEAR_EVENT_DAYS_BEFORE = 2
NEAR_EVENT_DAYS_AFTER = 3


@dataclass(frozen=True)
class AfterTurn:
    """What a stored turn's memory work is, decided once when its reply is stored (`after_turn`)."""

    state: str  # the reply's extraction_state: pending (work to do, inline or in the background) or done
    inline: tuple[MemoryDraft, ...] | None = None  # the v1 rules' candidates, written right after the commit


@dataclass
class MemoryPipeline:
    extractor: Extractor = "rules"
    recall_mode: Recall = "v1"
    injection_limit: int = 10
    recall_char_budget: int = 2000
    recall_timeout_s: float = 1.0
    llm_max_ops: int = 3
    llm_context_memories: int = 5
    max_memories: int = 1000
    embeddings: MemoryEmbeddings | None = None
    llm: LLMClient | None = None
    # v2 extractors only (the v1 rules add, nothing else): how a memory meeting an active one is
    # written (supersede: changes of mind replace, paraphrases merge, the rest is added; merge: the
    # similarity threshold alone), and the timezone relative dates are resolved in
    changes: Changes = "supersede"
    timezone: str = "Asia/Shanghai"
    # how long the end of a turn's stream waits for a background extraction, to carry its memories
    stream_wait_s: float = 0.5

    @property
    def inline(self) -> bool:
        """Only the v1 rules run right after the turn's commit; every other strategy in the background."""
        return self.extractor == "rules"

    def after_turn(self, user_text: str | None) -> AfterTurn:
        """The one place that decides: the v1 rules run on the user's text now, once, and what they
        find is written inline right after commit point 2 (nothing found: nothing to do); every other
        strategy runs in the background."""
        if not self.inline:
            return AfterTurn(EXTRACTION_PENDING)
        candidates = tuple(extract_candidate_memories(user_text))
        return AfterTurn(EXTRACTION_PENDING if candidates else EXTRACTION_DONE, candidates)

    def read_for_prompt(self, conn: Connection, agent_id: str) -> list[StoredMemory]:
        """Inside commit point 1. v1: the first `injection_limit`; ranked: all of them, ranked by `recall`."""
        if self.recall_mode == "ranked":
            return repository.active_memories_with_vectors(conn, agent_id)
        return repository.memories_for_prompt(conn, agent_id, limit=self.injection_limit)

    async def recall(self, user_text: str | None, active: list[StoredMemory]) -> list[StoredMemory]:
        """The memories a turn injects. v1: the first `injection_limit` in v1 order (`active` is in it).

        ranked: boundaries first, then importance, recency and similarity to the user's message,
        within the limit and the character budget; an event from two days before to three days after
        today goes before the rest (boundaries excepted). The message is embedded only when there is
        something to choose (more memories than fit), bounded by a timeout; when it fails, times out
        or there is no embedder, similarity is left out. Either way an event's memory shows its day
        beside the user's words.
        """
        embeddings = self.embeddings
        if self.recall_mode != "ranked":
            return [self._dated(m) for m in active[: self.injection_limit]]
        similarities: list[float | None] = [None] * len(active)
        with_vectors = (
            [(i, v) for i, m in enumerate(active) if (v := m.vector(embeddings.model)) is not None]
            if embeddings is not None
            else []
        )
        if user_text and with_vectors and embeddings is not None:
            if self._all_fit(active):
                metrics.recalled("skipped")
            else:
                similarities = await self._similarities(embeddings, user_text, active, with_vectors)
        today = local_day(now_ms(), self.timezone)
        candidates = [
            RecallCandidate(i, m.type, m.importance, m.updated_at_ms, m.content, similarities[i], self._boost(m, today))
            for i, m in enumerate(active)
        ]
        ranked = rank_memories(
            candidates, now_ms=now_ms(), limit=self.injection_limit, char_budget=self.recall_char_budget
        )
        return [self._dated(active[c.index]) for c in ranked]

    async def _similarities(
        self,
        embeddings: MemoryEmbeddings,
        user_text: str,
        active: list[StoredMemory],
        with_vectors: list[tuple[int, bytes]],
    ) -> list[float | None]:
        """Each memory's similarity to the message (None without a vector), all None when embedding
        the message fails or times out."""
        similarities: list[float | None] = [None] * len(active)
        try:
            query = await asyncio.wait_for(embeddings.query(user_text), self.recall_timeout_s)
            scores = recall_scores(
                embeddings, query, user_text, [v for _, v in with_vectors], [active[i].content for i, _ in with_vectors]
            )
        except Exception:
            metrics.recalled("failed")
            log.warning("embedding the user message for recall failed; ranking without similarity", exc_info=True)
            return similarities
        metrics.recalled("embedded")
        for (i, _), score in zip(with_vectors, scores, strict=True):
            similarities[i] = float(score)
        return similarities

    def _all_fit(self, active: list[StoredMemory]) -> bool:
        """Every memory goes into the prompt whatever the similarity (within the limit and the
        character budget): the message is not embedded, which keeps the model off the reply's path."""
        return len(active) <= self.injection_limit and sum(len(m.content) for m in active) <= self.recall_char_budget

    @staticmethod
    def _boost(memory: StoredMemory, today: date) -> float:
        """An event from two days before to three days after today goes before any other memory but boundaries."""
        if memory.event_date is None:
            return 0.0
        days = (date.fromisoformat(memory.event_date) - today).days
        return NEAR_EVENT_BOOST if -NEAR_EVENT_DAYS_BEFORE <= days <= NEAR_EVENT_DAYS_AFTER else 0.0

    @staticmethod
    def _dated(memory: StoredMemory) -> StoredMemory:
        """An event's day goes into the prompt beside the user's words (下周三 means nothing a week later)."""
        if memory.event_date is None:
            return memory
        if _CJK.search(memory.content):
            return replace(memory, content=f"{memory.content}（日期：{memory.event_date}）")
        return replace(memory, content=f"{memory.content} (date: {memory.event_date})")
