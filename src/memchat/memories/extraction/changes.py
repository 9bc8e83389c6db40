"""Changes of mind (MEMCHAT_MEMORY_CHANGES=supersede): how one candidate meets the active memories.

Each candidate is compared with every active memory (`conflicts.relation`, with the vectors'
similarity when there are vectors): a change of mind supersedes the memories it contradicts, a
paraphrase is merged into the closest one, anything else is a new memory. Where the slots and cue
words find no relation, the pair classifier (`language.relations`) may name the one memory the
candidate changes or repeats. A fact candidate gets
the day of its event, resolved from when the user said it. Pure apart from reading the vectors.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Literal

from memchat.clock import now_ms
from memchat.memories.language.conflicts import (
    COMPATIBLE,
    CONTRADICTS,
    SAME,
    Statement,
    analyse,
    content_overlap,
    relation,
)
from memchat.memories.language.dates import resolve_event_date
from memchat.memories.language.people import same_person, someone_else, whom
from memchat.memories.language.pets import no_longer_has
from memchat.memories.language.semantic import MemoryEmbeddings, first_person
from memchat.memories.language.topics import one_at_a_time, same_topic
from memchat.memories.types import FACT, PREFERENCE, MemoryDraft, StoredMemory

if TYPE_CHECKING:
    from memchat.memories.language.embedder import Matrix

ChangesMode = Literal["merge", "supersede"]
MAX_FACTS_PER_TURN = 4
"""Memories one message may make under the v2 extractors: each statement cut into the facts it holds."""


@dataclass(frozen=True)
class Changes:
    """How extraction treats a memory that meets an active one, and when the user said it."""

    mode: ChangesMode = "supersede"
    said_at_ms: int | None = None
    timezone: str = "Asia/Shanghai"

    @property
    def supersede(self) -> bool:
        return self.mode == "supersede"

    def event_date(self, memory_type: str, content: str) -> str | None:
        if memory_type != FACT:
            return None
        day: date | None = resolve_event_date(content, self.said_at_ms or now_ms(), self.timezone)
        return day.isoformat() if day is not None else None


@dataclass(frozen=True)
class Verdict:
    supersedes: tuple[str, ...] = ()
    merge_into: str | None = None
    drop: bool = False  # the same as a memory added earlier this turn
    event_date: str | None = None


def statement(text: str) -> Statement:
    return analyse(first_person(text))


def _model_may_decide(new: Statement, old: Statement) -> bool:
    """Where the pair classifier may turn the rules' `compatible` into a change or a paraphrase: not
    when both name a value for one slot (the slot patterns decide), nor when each names one for a
    different slot and the new one says nothing changed (a car beside a job: 我开的是一辆本田飞度 /
    我在长沙做房产中介), nor when the new statement adds to what was said (also / too / 也 / 还: never
    a replacement), nor when the two sit side by side."""
    if _share_a_slot(new, old):
        return False
    different_slots = bool(new.slots) and bool(old.slots) and not new.changed
    return not different_slots and not new.also and not side_by_side(new, old)


# Parts of the week, the day or the year that go side by side: a statement about one beside a memory
# about the other adds to it ("On weeknights I play in a darts league" beside "I go kayaking most
# weekends"; 晚上跑跑外卖 beside 我白天在超市当收银员), unless it says it changed something.
_PARTS = tuple(
    (re.compile(one, re.IGNORECASE), re.compile(other, re.IGNORECASE))
    for one, other in (
        (r"\bweek(?:day|night)s?\b|\bduring the week\b|工作日|平时|周一到周五", r"\bweekends?\b|周末"),
        (r"\bsummers?\b|夏天", r"\bwinters?\b|冬天"),
        (r"白天|上午", r"晚上|夜里"),
    )
)
# 还 / 又 before a verb of doing or having, 另一 (the other one): one more thing beside the first
# (阳台上还养了好多多肉, 最近又报了个尤克里里班, 另一套在海南).
_ONE_MORE = re.compile(r"还[养跑学报做开接玩兼练种带考买]|又[报养买学开接玩练种带考]|另一[个套只辆份家]")
# ...but after 后来 / 然后, 又 tells what came next (豆豆飞走了，后来我又养了两只仓鼠: in the parrot's place).
_NEXT = re.compile(r"后来|然后|之后|接着")


def side_by_side(new: Statement, old: Statement) -> bool:
    """The new statement adds a second thing beside the memory's (`_PARTS`, `_ONE_MORE`), and does
    not say that something changed: never a replacement."""
    if new.changed:
        return False
    if _ONE_MORE.search(new.text) and not _NEXT.search(new.text):
        return True
    return any(
        (one.search(new.text) and other.search(old.text)) or (other.search(new.text) and one.search(old.text))
        for one, other in _PARTS
    )


def _share_a_slot(new: Statement, old: Statement) -> bool:
    """Both name a value for one slot: the slot patterns decide between them."""
    return bool(new.slots.keys() & old.slots.keys())


def supersedes_for_update(new_content: str, old: StoredMemory) -> bool:
    """Whether an LLM's UPDATE of `old` to `new_content` is a change of mind rather than a rewrite."""
    return relation(statement(new_content), statement(old.content)) == CONTRADICTS


def _similarities(
    vector: bytes | None, known: Sequence[StoredMemory], embeddings: MemoryEmbeddings | None
) -> list[float | None]:
    similarities: list[float | None] = [None] * len(known)
    if embeddings is None or vector is None:
        return similarities
    rows = [(i, v) for i, m in enumerate(known) if (v := m.vector(embeddings.model)) is not None]
    if rows:
        scores = embeddings.scores(vector, [v for _, v in rows])
        for (i, _), score in zip(rows, scores, strict=True):
            similarities[i] = float(score)
    return similarities


def _topic_scores(vector: bytes | None, text: str, embeddings: MemoryEmbeddings | None) -> dict[str, float] | None:
    return embeddings.topic_scores(vector, text) if embeddings is not None and vector is not None else None


@dataclass(frozen=True)
class Reading:
    """What the rules read of one active memory beside a new statement."""

    text: str  # the memory, in the first person
    who: str | None  # someone else it is about (`people.someone_else`), None for the user
    old: Statement
    same_topic: bool | None
    verdict: str  # SAME, CONTRADICTS or COMPATIBLE
    single: bool = False  # both clearly about a topic one has one of at a time (`topics.ONE_AT_A_TIME`)
    whom: frozenset[str | None] = frozenset({None})  # whose memory it may be (`people.whom`)


@dataclass(frozen=True)
class PairRead:
    """A candidate beside the active memories: the vectors' similarity and the rules' reading of each
    (`pair_readings`), and the pair classifier's (`pairs.model_reading`; None without a model or
    without a memory it may change)."""

    similarities: list[float | None]
    readings: list[Reading]
    model: "ModelReading | None"


ModelReading = tuple[list[tuple[StoredMemory, Reading]], "Matrix"]
"""The memories a statement may change, each with its rules' reading, and the pair classifier's
probabilities of each relation (`RELATIONS`) of the statement to each."""


def pair_readings(
    embeddings: MemoryEmbeddings | None,
    new: Statement,
    content: str,
    vector: bytes | None,
    known: Sequence[StoredMemory],
) -> tuple[list[float | None], list[Reading]]:
    """The vectors' similarity of `content` to each active memory, and the rules' reading of each pair."""
    topic = _topic_scores(vector, content, embeddings)
    similarities = _similarities(vector, known, embeddings)
    readings = [
        read_pair(embeddings, new, topic, m.content, m.vector(embeddings.model) if embeddings else None, similarity)
        for m, similarity in zip(known, similarities, strict=True)
    ]
    return similarities, readings


def read_pair(
    embeddings: MemoryEmbeddings | None,
    new: Statement,
    new_topic: dict[str, float] | None,
    text: str,
    vector: bytes | None,
    similarity: float | None,
) -> Reading:
    """`conflicts.relation` of a new statement and one memory, with the vectors' similarity and topics."""
    text = first_person(text)
    old = analyse(text)
    old_topic = _topic_scores(vector, text, embeddings)
    topic = same_topic(new_topic, old_topic) if new_topic and old_topic else None
    single = bool(new_topic and old_topic and one_at_a_time(new_topic, old_topic))
    return Reading(text, someone_else(text), old, topic, relation(new, old, similarity, topic), single, whom(text))


REPLACE_THRESHOLD = 0.5
"""The pair classifier's probability (change + paraphrase) at which a candidate replaces the memory
it is most likely to replace, where the slots and cue words found no relation (`language.relations`;
chosen on the development pairs: see bench/memory_eval/RESULTS.md)."""
CUE_CHANGE_THRESHOLD = 0.2
"""The same for a change alone, when the statement says that something changed (a cue word, not also
/ too / 也 / 还, or a topic one has one of at a time) and the memory is a fact or a preference: "Traded
in the Jeep for a Model 3" after "Got an old Jeep Wrangler" (chosen on the change sets: a negation as
the cue retired an allergy on "couldn't stop scratching" on a development recall set)."""
PLAIN_CHANGE_THRESHOLD = 0.3
PLAIN_CHANGE_SHARE = 0.7
"""A plain statement replaces the memory it most likely changes at P(change) >= 0.3 when a change is
this share of the reading that the two are related at all: "Got hired as a dental hygienist last
month" after "I work as a bank teller" (chosen on fresh3-12 and heldout8, 11, 12; at 0.2 讲故事他嫌幼稚
retired a class moved to Friday). No plain remark retires a dated event (`_keeps_its_day`)."""
SURE_PARAPHRASE = 0.6
"""Below this probability of a paraphrase, a statement that drops a slot value of the memory it would
merge into is kept beside it (学校下个月开运动会 read 0.53 a paraphrase of 我是一名小学体育老师, and the
merge would have rewritten the job away); the development paraphrases that drop a value in other words
(调度员 / 调度, vegetarian / veggie) read 0.62-1.0."""
# A happening of one day (今天直播的时候网卡了, "Tonight was brutal"): told without a cue word, it tells
# more of a standing fact, never replaces it.
_ONE_DAY = re.compile(
    r"今天|昨天|今晚|昨晚|今早|刚才|刚刚|^today\b|\btoday (?:was|i|we)\b|"
    r"\b(?:tonight|yesterday|last night|this morning|just now)\b",
    re.IGNORECASE,
)


def _model_choice(candidate: MemoryDraft, new: Statement, model: "ModelReading | None") -> tuple[str, str] | None:
    """(memory id, CONTRADICTS or SAME): the one memory the pair classifier says the candidate
    changes or repeats (probabilities of both together at least `REPLACE_THRESHOLD`, or of a change
    at least `CUE_CHANGE_THRESHOLD` when the candidate says something changed), among the memories
    that may be about the same person (`people.whom`); None without the classifier's reading
    (`pairs.model_reading`)."""
    if model is None:
        return None
    import numpy as np  # the `embeddings` extra, present whenever there is a reading

    from memchat.memories.language.relations import CHANGE, PARAPHRASE, RELATIONS, UNRELATED

    olds, p = model
    replace = p[:, RELATIONS.index(CHANGE)] + p[:, RELATIONS.index(PARAPHRASE)]
    best = int(np.argmax(replace))
    if float(replace[best]) < REPLACE_THRESHOLD:
        if one_day(new):
            return None  # one day's happening tells more of a memory (`_ONE_DAY`); it changes none
        change = p[:, RELATIONS.index(CHANGE)]
        best = int(np.argmax(change))
        unrelated = float(p[best, RELATIONS.index(UNRELATED)])
        # a cue word, or a topic one has one of (then the change at least as likely as nothing to do
        # with it: 补习班太贵了 is no change of 我在顺丰送快递, though both are read as about work)
        says_so = new.changed or (olds[best][1].single and float(change[best]) >= unrelated)
        weak = not new.also and olds[best][0].type in (FACT, PREFERENCE)
        if weak and says_so and float(change[best]) >= CUE_CHANGE_THRESHOLD:
            return olds[best][0].id, CONTRADICTS  # it says something changed, and this is what most likely did
        related = 1.0 - unrelated
        plain = float(change[best]) >= max(PLAIN_CHANGE_THRESHOLD, PLAIN_CHANGE_SHARE * related, unrelated)
        if weak and plain and not _keeps_its_day(olds[best][0], new, candidate.content):
            return olds[best][0].id, CONTRADICTS  # said plainly, but if the two are related at all, it is a change
        return None
    changed = p[best, RELATIONS.index(CHANGE)] >= p[best, RELATIONS.index(PARAPHRASE)]
    if changed and one_day(new):
        return None  # one day's happening tells more of the memory (`_ONE_DAY`)
    if changed and _names_only_repeated(new, olds[best][1]):
        changed = False  # a new value would be named: this says the old one again, in other words
    keeps = changed and _keeps_its_day(olds[best][0], new, candidate.content)
    if not changed and p[best, RELATIONS.index(PARAPHRASE)] < SURE_PARAPHRASE and _loses_values(new, olds[best][1].old):
        return None  # a paraphrase says the memory's values again; merged, this would lose them
    return None if keeps else (olds[best][0].id, CONTRADICTS if changed else SAME)


def _loses_values(new: Statement, old: Statement) -> bool:
    """A slot value of the memory that the new statement neither fills nor says (学校下个月开运动会
    beside 我是一名小学体育老师: the job): merged into it, the memory would lose that value."""
    kept = {v for values in new.slots.values() for v in values}
    said = new.text.casefold()
    return any(v not in kept and v.casefold() not in said for values in old.slots.values() for v in values)


def one_day(new: Statement) -> bool:
    """The statement tells of one day's happening and says nothing changed (`_ONE_DAY`)."""
    return not new.changed and _ONE_DAY.search(new.text) is not None


def _keeps_its_day(old: StoredMemory, new: Statement, content: str) -> bool:
    """A dated event stays unless the statement says something changed or names a day itself."""
    return old.event_date is not None and not new.changed and resolve_event_date(content, now_ms()) is None


# A name in Latin letters (Radiohead, Blue Bottle, UCLA) or a number: the values a change would bring.
_NAME = re.compile(r"(?<![\w'])(?:[A-Z][\w&-]*|\d+(?:[.,]\d+)?)")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)$")


def _names(text: str, *, at_sentence_start: bool) -> set[str]:
    """The names and numbers a text says (casefolded); a capital that starts a sentence counts only
    with `at_sentence_start` (it may be an ordinary word: "Nobody beats...")."""
    return {
        m.group(0).casefold()
        for m in _NAME.finditer(text)
        if m.group(0) != "I" and (at_sentence_start or not _SENTENCE_START.search(text[: m.start()]))
    }


def _names_only_repeated(new: Statement, reading: Reading) -> bool:
    """The new statement names something, only what the memory named, and negates or revises
    nothing: "Nobody beats Radiohead for me" after "Radiohead is my favorite band" says it again
    (a change of mind brings a new value, or says the old one no longer holds)."""
    return not (new.negative or new.changed) and names_only_its_names(new.text, reading, at_sentence_start=False)


def names_only_its_names(text: str, reading: Reading, *, at_sentence_start: bool = True) -> bool:
    """The text names something, and only what the memory named: "Mochi knocked my mug off the table
    again" beside "I have a cat named Mochi" tells of the cat. A capital that starts a sentence of the
    text counts as a name only with `at_sentence_start`."""
    named = _names(text, at_sentence_start=at_sentence_start)
    return bool(named) and named <= _names(reading.text, at_sentence_start=True)


def _anothers_fact(draft: MemoryDraft, who: str | None, new: Statement, memory: StoredMemory, read: Reading) -> bool:
    """A fact or liking of someone else's beside one of the user's own: it never replaces or repeats
    it (我住在南京 / 我姐姐刚搬去了重庆; 我对青霉素过敏 / 我们科室的小王对头孢过敏), unless both fill one
    slot (我男朋友叫阿强 / 我现在的对象叫小林). Not for boundaries: "My ex is off limits" repeats the
    user's boundary, whoever it names."""
    facts = draft.type in (FACT, PREFERENCE) and memory.type in (FACT, PREFERENCE)
    return facts and who is not None and read.who is None and not _share_a_slot(new, read.old)


def judge_candidate(
    candidate: MemoryDraft,
    known: Sequence[StoredMemory],
    added: Sequence[MemoryDraft],
    changes: Changes,
    pair_read: PairRead,
) -> Verdict:
    """Add, merge, supersede or drop one candidate, by its readings beside the active memories
    (`pair_read`: `pairs.candidate_read`, made before judging since the joint reading calls the model)."""
    new = statement(candidate.content)
    event_date = candidate.event_date or changes.event_date(candidate.type, candidate.content)
    if any(relation(new, statement(a.content)) == SAME for a in added):
        return Verdict(drop=True)
    contradicted: list[str] = list(candidate.supersedes)
    same: list[tuple[float, str]] = []
    who = someone_else(first_person(candidate.content))
    choice = _model_choice(candidate, new, pair_read.model)
    for memory, similarity, read in zip(known, pair_read.similarities, pair_read.readings, strict=True):
        # two other people's facts never replace or repeat each other (我爸… / 我妈…), whatever the model reads
        if who is not None and read.who is not None and not same_person(read.who, who):
            continue
        old, verdict = read.old, read.verdict
        # the user's pet, gone to someone else (我妈…把猫抱回老家养了, "my ex kept the dog"): still a change
        gone = verdict != COMPATIBLE and read.who is None and no_longer_has(new.text, old.text)
        if verdict != COMPATIBLE and not gone and _anothers_fact(candidate, who, new, memory, read):
            verdict = COMPATIBLE
        if verdict == COMPATIBLE and choice is not None and choice[0] == memory.id and _model_may_decide(new, old):
            verdict = choice[1]
        if verdict == CONTRADICTS and memory.id not in contradicted:
            contradicted.append(memory.id)
        elif verdict == SAME:
            same.append((content_overlap(new.chunks, old.chunks) + (similarity or 0.0), memory.id))
    if contradicted:
        return Verdict(supersedes=tuple(contradicted), event_date=event_date)
    if same:
        return Verdict(merge_into=max(same)[1], event_date=event_date)
    return Verdict(event_date=event_date)
