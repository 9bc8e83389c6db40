"""Sentences the remember-or-not classifier dropped that still belong in memory: a change of an
active memory said in words it read as a remark (我现在不喝咖啡了), and an addition to one said
without repeating what it adds to ("oh and penicillin too" after "I'm allergic to shellfish",
周五晚上我还有个羽毛球局 after 我周三晚上上陶笛课). Each is kept with the type of the memory it
changes or adds to, within the per-turn limit."""

import re
from collections.abc import Iterator, Sequence

from memchat.clock import now_ms
from memchat.memories.extraction.changes import (
    MAX_FACTS_PER_TURN,
    names_only_its_names,
    one_day,
    side_by_side,
    statement,
)
from memchat.memories.extraction.embeddings import said_for_the_moment
from memchat.memories.extraction.pairs import candidate_read
from memchat.memories.language.conflicts import CONTRADICTS, relation
from memchat.memories.language.content import clean_content
from memchat.memories.language.facts import split_facts
from memchat.memories.language.rules import rule_importance
from memchat.memories.language.semantic import MemoryEmbeddings
from memchat.memories.types import FACT, PREFERENCE, MemoryDraft, StoredMemory

_SENTENCE_END = re.compile(r"(?<=[。！？!?；;\n])")


def _dropped_facts(user_text: str, candidates: Sequence[MemoryDraft]) -> Iterator[tuple[str, str]]:
    """(fact, its clean content) for each fact of the message, in order, that no candidate holds."""
    taken = {c.content for c in candidates}
    for sentence in (p.strip() for p in _SENTENCE_END.split(user_text)):
        for fact in split_facts(sentence) if sentence else []:
            if (content := clean_content(fact)) is not None and content not in taken:
                yield fact, content


_QUESTION_MARK = r"[?？]"


def _revises_nothing(content: str) -> bool:
    """A question, a request or the moment's state (你会不会觉得我话太多了？, "Almost missed my stop just
    now") changes no memory, however near one it reads."""
    return re.search(_QUESTION_MARK, content) is not None or said_for_the_moment(content)


def revisions(user_text: str, candidates: Sequence[MemoryDraft], known: Sequence[StoredMemory]) -> list[MemoryDraft]:
    """Sentences the classifier did not keep that change an active memory (我现在不喝咖啡了): kept,
    with the type of the memory they change, up to the per-turn limit. Only the cue words and slots
    decide here; `model_revisions` adds the pair classifier's reading for sentences that say a change."""
    found: list[MemoryDraft] = []
    for fact, content in _dropped_facts(user_text, candidates):
        if any(f.content == content for f in found) or len(candidates) + len(found) >= MAX_FACTS_PER_TURN:
            continue
        if _revises_nothing(content):
            continue
        new = statement(content)
        changed = next((m for m in known if relation(new, statement(m.content)) == CONTRADICTS), None)
        if changed is not None:
            found.append(MemoryDraft(changed.type, content, rule_importance(fact)))
    return found


MODEL_REVISION_THRESHOLD = 0.5
"""The pair classifier's probability of a change at which a sentence the classifier dropped is kept
as a revision of an active memory (`model_revisions`; chosen on the development sets)."""


PLAIN_REVISION_THRESHOLD = 0.6
"""The same for a sentence that says no change in words ("Lease ran out and we landed in Flagstaff"
after "We live in Olympia"; chosen on the development sets)."""


async def model_revisions(
    user_text: str,
    candidates: Sequence[MemoryDraft],
    known: Sequence[StoredMemory],
    embeddings: MemoryEmbeddings | None,
) -> list[MemoryDraft]:
    """Sentences the classifier did not keep that the pair classifier reads as a change of an active
    memory about the same person: with probability `MODEL_REVISION_THRESHOLD` or more when the
    sentence says something changed or stopped (a cue word, a negation: "Now I take the 7:15 train"
    after "I commute on the 6:40 train"), `PLAIN_REVISION_THRESHOLD` or more when it does not ("Lease
    ran out and we landed in Flagstaff" after "We live in Olympia"): kept, with that memory's type.
    A remark near a memory can read as a change (Mochi knocked my mug off the table: a change of
    having a cat; 那次疼得直冒冷汗 beside 我有肾结石), hence the higher bar without a cue; a sentence
    that adds (also / too / 也) is never kept here."""
    if embeddings is None or not known:
        return []
    await embeddings.prepare_topics()  # loads the pair classifier
    if embeddings.relations is None or all(m.vector(embeddings.model) is None for m in known):
        return []
    import numpy as np

    from memchat.memories.language.relations import CHANGE, RELATIONS

    budget = MAX_FACTS_PER_TURN - len(candidates)
    contents = list(dict.fromkeys(content for _, content in _dropped_facts(user_text, candidates)))
    if budget <= 0 or not contents:
        return []
    found: list[MemoryDraft] = []
    for content, vector in zip(contents, await embeddings.passages(contents), strict=True):
        new = statement(content)
        if new.also or len(found) >= budget or _revises_nothing(content) or one_day(new):
            continue  # one day's happening (今天走了一万多步，腿都酸了) tells more of a memory, never changes it
        read = (await candidate_read(embeddings, content, vector, known)).model
        if read is None:
            continue
        olds, p = read
        change = p[:, RELATIONS.index(CHANGE)]
        best = int(np.argmax(change))
        # a remark near a memory reads as a change more often than a statement that says one does
        says_so = new.changed or new.negative
        if not says_so and names_only_its_names(content, olds[best][1]):
            continue  # "Mochi knocked my mug off the table again" tells of the cat, it changes nothing
        if side_by_side(new, olds[best][1].old):
            continue  # 晚上还跑跑外卖 beside 我白天在超市当收银员: a second job, not a new one
        if float(change[best]) >= (MODEL_REVISION_THRESHOLD if says_so else PLAIN_REVISION_THRESHOLD):
            found.append(MemoryDraft(olds[best][0].type, content, rule_importance(content)))
    return found


ADDITION_WINDOW_MS = 10 * 60_000
"""How recently the memory an addition adds to was made or changed (`additions`): "and penicillin
too" says more about what was just said, not about a fact from another day."""

# A sentence that adds to what was said without repeating it: "And asthma", "oh and penicillin too",
# "We also just got a kitten", 周五晚上我还有个羽毛球局, 另外…, 而且…
_ADDS_EN = re.compile(
    r"^(?:oh,? |btw,? )?(?:and|plus)\b|\b(?:also|as well)\b|\btoo\b(?=\s*(?:[,.!;]|$))", re.IGNORECASE
)
_ADDS_ZH = re.compile(r"^(?:对了|哦|噢|啊)?[，,]?(?:还有|另外|而且|再加上)|还有|也[是有在会]")
_QUESTION = re.compile(_QUESTION_MARK + r"|[吗呢吧][。！!]?$")


# The words that say a sentence adds, and those that say nothing by themselves: what is left of a
# sentence without them is the addition ("Yeah. Also." and "Me too" add nothing).
_FILLER = re.compile(
    r"\b(?:and|also|too|as well|plus|oh|yeah|yes|ok|okay|well|so|btw|um|uh|lol|haha|same|this|that|them|then|here"
    r"|there|what|know|mean|like|sure|really|just)\b|还有|另外|而且|再加上|对了|也|哦|噢|啊|嗯|[^\w]",
    re.IGNORECASE,
)
_CONTENT_WORD = re.compile(r"[A-Za-z0-9']{4,}|[A-Za-z0-9']+\s+[A-Za-z0-9']+")
_CJK_CHAR = re.compile(r"[\u3400-\u9fff]")


def says_it_adds(content: str) -> bool:
    """Whether a sentence adds something to what was said (and… / also / too / 还有 / 也…): not a
    question, and more than the words that say it adds ("Yeah. Also." adds nothing)."""
    text = content.strip()
    if _QUESTION.search(text) or not (_ADDS_EN.search(text) or _ADDS_ZH.search(text)):
        return False
    left = _FILLER.sub(" ", text)
    return bool(_CONTENT_WORD.search(left)) or len(_CJK_CHAR.findall(left)) >= 4


def additions(
    user_text: str, candidates: Sequence[MemoryDraft], known: Sequence[StoredMemory], said_at_ms: int
) -> list[MemoryDraft]:
    """Sentences the classifier did not keep that add to the memory made or changed last, when that
    was a fact or a preference within `ADDITION_WINDOW_MS` ("oh and penicillin too" right after "I'm
    allergic to shellfish"): kept, with its type. The classifier reads a message alone, and alone
    such a sentence does not say what it is about; said right after a fact, it adds one."""
    latest = max(known, key=lambda m: m.updated_at_ms, default=None)
    if latest is None or latest.type not in (FACT, PREFERENCE):
        return []
    if not 0 <= said_at_ms - latest.updated_at_ms <= ADDITION_WINDOW_MS:
        return []
    found: list[MemoryDraft] = []
    for fact, content in _dropped_facts(user_text, candidates):
        if len(candidates) + len(found) >= MAX_FACTS_PER_TURN:
            break
        # the sentence as said: cleaning takes a leading "Also" off
        if not says_it_adds(fact) or any(f.content == content for f in found):
            continue
        said = statement(content)
        if said.also or not said.changed:  # "Started learning the cello too" adds
            found.append(MemoryDraft(latest.type, content, rule_importance(fact)))
    return found


async def with_revisions(
    user_text: str,
    candidates: Sequence[MemoryDraft],
    known: Sequence[StoredMemory],
    embeddings: MemoryEmbeddings | None,
    said_at_ms: int | None = None,
) -> list[MemoryDraft]:
    """The classifier's candidates, the sentences it dropped that change an active memory (by the cue
    words and slots, `revisions`, then by the pair classifier, `model_revisions`), and those that add
    to the memory made just before (`additions`; `said_at_ms` is when the user said it, now if None)."""
    found = [*candidates, *revisions(user_text, candidates, known)]
    found += await model_revisions(user_text, found, known, embeddings)
    return [*found, *additions(user_text, found, known, now_ms() if said_at_ms is None else said_at_ms)]
