"""A new statement beside each active memory, as the pair classifier reads them (`language.relations`).

One function builds the rows for both the server and the fitting (`language.relation_model`), so the
model sees at run time exactly what it was fitted on; the server passes the rules' readings it has
already made (`changes.read_pair`). Pure apart from reading the vectors.
"""

from collections.abc import Sequence

import numpy as np

from memchat.memories.extraction.changes import (
    ModelReading,
    PairRead,
    Reading,
    pair_readings,
    read_pair,
    statement,
)
from memchat.memories.language.conflicts import analyse
from memchat.memories.language.embedder import Matrix, vector_from_bytes
from memchat.memories.language.people import may_be_about, whom
from memchat.memories.language.relations import joint_features, joint_text, pair_features, reading, unit_vector
from memchat.memories.language.semantic import MemoryEmbeddings, first_person
from memchat.memories.types import StoredMemory


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


async def model_reading(
    embeddings: MemoryEmbeddings,
    content: str,
    vector: bytes,
    about: frozenset[str | None],
    known: Sequence[StoredMemory],
    readings: Sequence[Reading],
) -> ModelReading | None:
    """The active memories that may be about whom `content` is about (`about`, `people.whom`) and
    have a vector, with their readings, and the pair classifier's probabilities of each relation
    (`RELATIONS`) of `content` to each; None when there is no such memory. The rows the first reading
    finds near are read again jointly (`relations.RelationModel`: the memory and the statement
    embedded as one passage), and the two readings averaged."""
    model = embeddings.relations
    assert model is not None
    olds = [
        (m, r, v)
        for m, r in zip(known, readings, strict=True)
        if (v := m.vector(embeddings.model)) is not None and may_be_about(about, r.whom)
    ]
    if not olds:
        return None
    first = rows_for(embeddings, content, vector, [r for _, r, _ in olds], [v for _, _, v in olds])
    read = [(m, r) for m, r, _ in olds], model.probabilities(first)
    p = read[1]
    rows = model.joint_candidates(p)
    if not rows:
        return read
    joints = await embeddings.embedder.embed_passages([joint_text(olds[i][1].text, content) for i in rows])
    centre = embeddings.extractor.language_center(content)
    again = model.joint_probabilities(joint_features(first[rows], [unit_vector(j, centre) for j in joints]))
    p = p.copy()
    p[rows] = (p[rows] + again) / 2  # both readings, as one: the joint alone retired facts on remarks
    return read[0], p


async def candidate_read(
    embeddings: MemoryEmbeddings | None, content: str, vector: bytes | None, known: Sequence[StoredMemory]
) -> PairRead:
    """The rules' and the pair classifier's readings of a candidate beside each active memory, made
    before the candidates are judged (`changes.judge_candidate`), since the joint reading calls the model."""
    new = statement(content)
    similarities, readings = pair_readings(embeddings, new, content, vector, known)
    if embeddings is None or vector is None or embeddings.relations is None:
        return PairRead(similarities, readings, None)
    model = await model_reading(embeddings, content, vector, whom(first_person(content)), known, readings)
    return PairRead(similarities, readings, model)
