"""What a new statement is to an active memory, learned from labelled pairs: unrelated, compatible,
a change of mind, or a paraphrase. numpy only; pure.

The slot patterns (`slots.py`, `slots_en.py`) and the cue words of `conflicts.py` read a change
precisely where they match, and miss most changes said in the user's own words ("Caved and got an
iPhone" after "I use a Pixel"; 孩子九月上小学了 after 孩子在读幼儿园). A softmax regression over the
two statements' sentence vectors reads the rest: each vector centred on its language's mean and
normalised (u: the memory, v: the new statement), the features are u*v (on which dimensions the two
agree: their subject), |u-v| (where they part: the value), u+v (what the pair is about, so that
things a person has one of, a car or a job, learn to replace while hobbies and pets add up), and
the reading of `conflicts.py` (cosine, shared content, cue words, also / too, negation, slots,
topic, its verdict). (The new statement's n-grams were tried beside them and lost on the
development pairs.)

It is fitted on the hand-written pairs in `data/change_pairs_*.jsonl` with unrelated pairs drawn
among them (`relation_model.py`), and ships fitted in `data/relation_model.npz` for the packaged
embedder; with any other embedder, or when the file was made from other data, there is no model and
`conflicts.relation` decides alone.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memchat.memories.language.classifier import SoftmaxClassifier
from memchat.memories.language.conflicts import CONTRADICTS, SAME, Statement, content_overlap
from memchat.memories.language.embedder import Matrix, Vector

UNRELATED, COMPATIBLE, CHANGE, PARAPHRASE = "unrelated", "compatible", "change", "paraphrase"
RELATIONS = (UNRELATED, COMPATIBLE, CHANGE, PARAPHRASE)

FEATURES_VERSION = 1
"""Bumped whenever `pair_features` changes: a model fitted on other features is not used."""


_PEOPLE_ZH = (
    "同事|朋友|闺蜜|哥们|室友|同学|舍友|老板|领导|邻居|舅舅|舅妈|叔叔|阿姨|姑姑|姨|表哥|表姐|表弟|表妹|堂哥|堂姐"
    "|哥哥?|姐姐?|弟弟?|妹妹?|爸爸?|妈妈?|爷爷|奶奶|外公|外婆|姥姥|姥爷|婆婆|公公|岳父|岳母|老公|老婆|对象|男朋友|女朋友"
    "|男友|女友|儿子|女儿|闺女|孩子|娃|宝宝|合伙人|师傅|徒弟|学生|病人|客户|兄弟|姐妹|媳妇|丈夫|妻子|先生|太太|发小|队友"
    "|搭档|上司|实习生|侄子|侄女|外甥|外甥女|孙子|孙女|亲戚|家人"
)
_SOMEONE_ELSE = re.compile(
    rf"^(?:对了|话说|其实|就是)?[，,\s]*(?:我|我的|我们|我家|咱)?(?:[\u4e00-\u9fff]{{0,4}}?有(?:个|一个|位))?"
    rf"(?:[\u4e00-\u9fff]{{0,4}}的)?({_PEOPLE_ZH}|小姑娘|小伙子?|大爷|大妈)"
    r"|^(?:so |oh |btw,? )?(?:my|our|a) (?:\w+ )?(coworker|colleague|friend|bestie|roommate|classmate|boss|neighbou?r|"
    r"uncle|aunt|cousin|brother|sister|mom|mother|dad|father|grandma|grandpa|husband|wife|partner|boyfriend|girlfriend|"
    r"son|daughter|kid|baby|team|manager|patient|client|buddy|pal|fianc[eé]e?|niece|nephew|grandson|granddaughter|"
    r"in-laws?|stepson|stepdaughter|teammate|bandmate|ex)s?\b",
    re.IGNORECASE,
)


def someone_else(text: str) -> str | None:
    """Who a statement is about when it is not the user (我同事去年考的托福, my brother moved to Denver):
    the relation word; None for the user. The pair classifier compares a user's statements only
    with the user's, and another person's only with the same person's."""
    m = _SOMEONE_ELSE.match(text.strip())
    return (m.group(1) or m.group(2)).lower() if m else None


def unit_vector(vector: npt.ArrayLike, centre: npt.ArrayLike) -> Vector:
    centred = np.asarray(vector, dtype=np.float32).reshape(-1) - np.asarray(centre, dtype=np.float32)
    return (centred / max(float(np.linalg.norm(centred)), 1e-12)).astype(np.float32)


def reading(new: Statement, old: Statement, cosine: float, same_topic: bool | None, verdict: str) -> list[float]:
    """`conflicts.py`'s reading of a pair, as numbers."""
    shared = new.slots.keys() & old.slots.keys()
    differs = any(not (new.slots[k] & old.slots[k]) for k in shared)
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


@dataclass(frozen=True)
class RelationModel:
    """The fitted pair classifier."""

    classifier: SoftmaxClassifier

    def probabilities(self, features: Matrix) -> Matrix:
        """(n, len(RELATIONS)): each old statement's relation to the new one."""
        if features.shape[0] == 0:
            return np.zeros((0, len(RELATIONS)), dtype=np.float32)
        return self.classifier.predict_proba(features)
