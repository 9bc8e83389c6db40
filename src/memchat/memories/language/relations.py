"""What a new statement is to an active memory, learned from labelled pairs: unrelated, compatible,
a change of mind, or a paraphrase. numpy only; pure.

The slot patterns (`slots.py`, `slots_en.py`) and the cue words of `conflicts.py` read a change
precisely where they match, and miss most changes said in the user's own words ("Caved and got an
iPhone" after "I use a Pixel"; 孩子九月上小学了 after 孩子在读幼儿园). A classifier over the two
statements' sentence vectors reads the rest (`classifier.BlendedClassifier`: a softmax regression
beside one with a hidden layer). Each vector is centred on its language's mean and normalised
(u: the memory, v: the new statement); the features are u*v (on which dimensions the two agree:
their subject), |u-v| (where they part: the value), u+v (what the pair is about, so that things a
person has one of, a car or a job, learn to replace while hobbies and pets add up), and the
reading of `conflicts.py` (cosine, shared content, cue words, also / too, negation, slots,
topic, its verdict). (The new statement's n-grams were tried beside them and lost on the
development pairs. A softmax regression on the same features, the model until the twenty-second
round, reads a relation only as a sum of single features; the hidden layer reads where two meet.)

It is fitted on the hand-written pairs in `data/change_pairs_*.jsonl` with unrelated pairs drawn
among them (`relation_model.py`), and ships fitted in `data/relation_model.npz` for the packaged
embedder; with any other embedder, or when the file was made from other data, there is no model and
`conflicts.relation` decides alone.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memchat.memories.language.classifier import BlendedClassifier
from memchat.memories.language.conflicts import CONTRADICTS, SAME, Statement, content_overlap, values_meet
from memchat.memories.language.embedder import Matrix, Vector

UNRELATED, COMPATIBLE, CHANGE, PARAPHRASE = "unrelated", "compatible", "change", "paraphrase"
RELATIONS = (UNRELATED, COMPATIBLE, CHANGE, PARAPHRASE)

FEATURES_VERSION = 1
"""Bumped whenever `pair_features` changes: a model fitted on other features is not used."""


def unit_vector(vector: npt.ArrayLike, centre: npt.ArrayLike) -> Vector:
    centred = np.asarray(vector, dtype=np.float32).reshape(-1) - np.asarray(centre, dtype=np.float32)
    return (centred / max(float(np.linalg.norm(centred)), 1e-12)).astype(np.float32)


def reading(new: Statement, old: Statement, cosine: float, same_topic: bool | None, verdict: str) -> list[float]:
    """`conflicts.py`'s reading of a pair, as numbers."""
    shared = new.slots.keys() & old.slots.keys()
    differs = any(not values_meet(new.slots[k], old.slots[k]) for k in shared)
    flags = (
        new.changed,
        new.also,
        new.negative,
        old.negative,
        new.negative != old.negative,
        new.topic,
        old.topic,
        same_topic is True,
        same_topic is False,
        verdict == CONTRADICTS,
        verdict == SAME,
        bool(shared) and differs,
        bool(shared) and not differs,
        bool(new.slots),
        bool(old.slots),
    )
    return [cosine, content_overlap(new.chunks, old.chunks), *(float(f) for f in flags)]


READING_SIZE = 17


def pair_features(new: Vector, olds: Sequence[Vector], readings: Sequence[Sequence[float]]) -> Matrix:
    """One row per old statement (each a unit vector, `unit_vector`): u*v, |u-v|, u+v, the reading."""
    if not olds:
        return np.zeros((0, 0), dtype=np.float32)
    u = np.stack(list(olds))
    v = np.broadcast_to(new, u.shape)
    r = np.asarray(readings, dtype=np.float32).reshape(len(olds), READING_SIZE)
    return np.concatenate([u * v, np.abs(u - v), u + v, r], axis=1).astype(np.float32)


JOINT_VERSION = 1
"""Bumped whenever the joint reading changes (`joint_text`, `joint_features`)."""
JOINT_GATE = 0.05
JOINT_TOP = 3
"""The joint reading is made for at most `JOINT_TOP` memories, those the first reading gives a change
or a paraphrase at least `JOINT_GATE` (a remark beside unrelated memories costs no more model calls:
84% of the unrelated development pairs read below the gate, every change the joint reading won above)."""


def joint_text(old: str, new: str) -> str:
    """The two statements as one passage, the memory first: the model reads each word beside the other's."""
    return f"{old} {new}"


def joint_features(rows: Matrix, joint_units: Sequence[Vector]) -> Matrix:
    """The pair rows (`pair_features`) with the joint passage's unit vector (`unit_vector`) after each."""
    if rows.shape[0] == 0:
        return rows
    return np.concatenate([rows, np.stack(list(joint_units))], axis=1).astype(np.float32)


@dataclass(frozen=True)
class RelationModel:
    """The fitted pair classifier: the first reading, over the two statements' vectors, and the joint
    reading, which adds the vector of the two said as one passage (`joint_text`). Read apart, "Sold
    the old thing, I'm in a Subaru Outback now" and "I drive a 2009 Jeep Wrangler" read as a change at
    0.42; read as one passage, where the model attends from one to the other, at 0.51 (averaged).
    It costs one more model call per pair, hence only for the pairs the first reading finds near."""

    classifier: BlendedClassifier
    joint: BlendedClassifier | None = None

    def probabilities(self, features: Matrix) -> Matrix:
        """(n, len(RELATIONS)): each old statement's relation to the new one."""
        if features.shape[0] == 0:
            return np.zeros((0, len(RELATIONS)), dtype=np.float32)
        return self.classifier.predict_proba(features)

    def joint_probabilities(self, features: Matrix) -> Matrix:
        """The same from `joint_features` rows."""
        if self.joint is None or features.shape[0] == 0:
            return np.zeros((0, len(RELATIONS)), dtype=np.float32)
        return self.joint.predict_proba(features)

    def joint_candidates(self, probabilities: Matrix) -> list[int]:
        """The rows to read jointly: the `JOINT_TOP` likeliest changes or paraphrases above `JOINT_GATE`."""
        if self.joint is None or probabilities.shape[0] == 0:
            return []
        near = probabilities[:, RELATIONS.index(CHANGE)] + probabilities[:, RELATIONS.index(PARAPHRASE)]
        order = np.argsort(-near, kind="stable")[:JOINT_TOP]
        return [int(i) for i in order if float(near[i]) >= JOINT_GATE]
