"""A new statement beside each active memory, as the pair classifier reads them (`language.relations`).

One function builds the rows for both the server and the fitting (`language.relation_model`), so the
model sees at run time exactly what it was fitted on; the server passes the rules' readings it has
already made (`changes.read_pair`). Pure apart from reading the vectors.
"""

from collections.abc import Sequence

import numpy as np

from memchat.memories.extraction.changes import Reading, read_pair
from memchat.memories.language.conflicts import analyse
from memchat.memories.language.embedder import Matrix, vector_from_bytes
from memchat.memories.language.relations import pair_features, reading, unit_vector
from memchat.memories.language.semantic import MemoryEmbeddings, first_person


def rows_for(
    embeddings: MemoryEmbeddings,
    new_text: str,
    new_vector: bytes,
    readings: Sequence[Reading],
    vectors: Sequence[bytes],
) -> Matrix:
    """One feature row per active memory (its rules' reading and its passage vector)."""
    if not readings:
        return np.zeros((0, 0), dtype=np.float32)
    centre = embeddings.extractor.language_center
    new_text = first_person(new_text)
    new = analyse(new_text)
    new_unit = unit_vector(vector_from_bytes(new_vector), centre(new_text))
    units = [unit_vector(vector_from_bytes(v), centre(r.text)) for r, v in zip(readings, vectors, strict=True)]
    numbers = [
        reading(new, r.old, float(unit @ new_unit), r.same_topic, r.verdict)
        for r, unit in zip(readings, units, strict=True)
    ]
    return pair_features(new_unit, units, numbers)


def pair_rows(
    embeddings: MemoryEmbeddings, new_text: str, new_vector: bytes, olds: Sequence[tuple[str, bytes]]
) -> Matrix:
    """One feature row per (text, passage vector) of `olds`, against the new statement (the fitting)."""
    if not olds:
        return np.zeros((0, 0), dtype=np.float32)
    new = analyse(first_person(new_text))
    new_topic = embeddings.topic_scores(new_vector, new_text)
    similarities = embeddings.scores(new_vector, [v for _, v in olds])
    readings = [
        read_pair(embeddings, new, new_topic, text, vector, float(similarity))
        for (text, vector), similarity in zip(olds, similarities, strict=True)
    ]
    return rows_for(embeddings, new_text, new_vector, readings, [v for _, v in olds])
