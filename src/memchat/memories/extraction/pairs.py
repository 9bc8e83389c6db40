"""A new statement beside each active memory, as the pair classifier reads them (`language.relations`).

One function builds the rows for both the server and the fitting (`language.relation_model`), so the
model sees at run time exactly what it was fitted on. Pure apart from reading the vectors.
"""

from collections.abc import Sequence

import numpy as np

from memchat.memories.language.conflicts import analyse, relation
from memchat.memories.language.embedder import Matrix, vector_from_bytes
from memchat.memories.language.relations import Side, pair_features, reading, unit_vector
from memchat.memories.language.semantic import MemoryEmbeddings, first_person
from memchat.memories.language.topics import same_topic


def pair_rows(
    embeddings: MemoryEmbeddings, new_text: str, new_vector: bytes, olds: Sequence[tuple[str, bytes]]
) -> Matrix:
    """One feature row per (text, passage vector) of `olds`, against the new statement."""
    if not olds:
        return np.zeros((0, 0), dtype=np.float32)
    extractor = embeddings.extractor
    new_text = first_person(new_text)
    new = analyse(new_text)
    new_unit = unit_vector(vector_from_bytes(new_vector), extractor.language_center(new_text))
    new_topic = embeddings.topic_scores(new_vector, new_text)
    similarities = embeddings.scores(new_vector, [v for _, v in olds])
    sides: list[Side] = []
    readings: list[list[float]] = []
    for (text, vector), similarity in zip(olds, similarities, strict=True):
        text = first_person(text)
        old = analyse(text)
        unit = unit_vector(vector_from_bytes(vector), extractor.language_center(text))
        old_topic = embeddings.topic_scores(vector, text)
        topic = same_topic(new_topic, old_topic) if new_topic and old_topic else None
        verdict = relation(new, old, float(similarity), topic)
        sides.append(Side(old, unit))
        readings.append(reading(new, old, float(unit @ new_unit), topic, verdict))
    return pair_features(Side(new, new_unit), sides, readings)
