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
from memchat.memories.language.embedder import Matrix, Vector, vector_from_bytes
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
    memories = [(m, r) for m, r, _ in olds]
    first = rows_for(embeddings, content, vector, [r for _, r, _ in olds], [v for _, _, v in olds])
    p = model.probabilities(first)
    rows = model.joint_candidates(p)
    if not rows:
        return memories, p
    units = await joint_units(embeddings, [(olds[i][1].text, content) for i in rows])
    p[rows] = (p[rows] + model.joint_probabilities(joint_features(first[rows], units))) / 2
    return memories, p  # both readings, as one: the joint alone retired facts on remarks


async def joint_units(embeddings: MemoryEmbeddings, pairs: Sequence[tuple[str, str]], batch: int = 64) -> list[Vector]:
    """Each (old, new) said as one passage (`relations.joint_text`), embedded and made a unit vector
    centred on the new statement's language (`relations.unit_vector`): what the joint reading adds to
    a pair's row. The fit (`relation_model.fit_packaged`) and the server make them here, alike."""
    texts = [joint_text(old, new) for old, new in pairs]
    embed = embeddings.embedder.embed_passages
    joints = [row for i in range(0, len(texts), batch) for row in await embed(texts[i : i + batch])]
    centre = embeddings.extractor.language_center
    return [unit_vector(joint, centre(new)) for (_, new), joint in zip(pairs, joints, strict=True)]


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
