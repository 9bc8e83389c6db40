"""The `embeddings` memory extractor: remember-or-not and the type from labelled example utterances.

A small softmax regression (numpy, six classes: nothing to remember + the five v2 memory types)
is fitted on the embedder's passage vectors of the prototypes shipped in `data/prototypes.jsonl`
(the training split of bench/memory_eval, labelled by its LABELS.md), each beside the character
1-2-grams it contains (`CharNgrams`). For the packaged embedder the vectors and the fitted
classifiers ship beside the prototypes (`memories.language.prototype_vectors`); for any other
embedder they are made once per extractor, at start-up.
Importance follows the v1 rules; the content is the statement without commands and filler
(`memories.content`). Pure apart from the embedder calls.
"""

import asyncio
import json
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memchat.memories.extraction.changes import MAX_FACTS_PER_TURN
from memchat.memories.language.asking import asks_now
from memchat.memories.language.classifier import (
    DEFAULT_EPOCHS,
    DEFAULT_L2,
    DEFAULT_NGRAM_SIZES,
    CharNgrams,
    NgramSoftmax,
    SoftmaxClassifier,
    features,
)
from memchat.memories.language.content import clean_content
from memchat.memories.language.embedder import Embedder, Matrix, Vector
from memchat.memories.language.facts import split_facts
from memchat.memories.language.lasting import lasting_fact
from memchat.memories.language.prototype_vectors import Prepared, load_prepared, made_from, save_prepared
from memchat.memories.language.rules import MAX_CANDIDATES_PER_TURN, rule_importance
from memchat.memories.language.slots import read_slots
from memchat.memories.types import BOUNDARY, CONVERSATION_STYLE, FACT, PREFERENCE, V2_MEMORY_TYPES, MemoryDraft
from memchat.text import normalize

CLASSES: tuple[str | None, ...] = (None, *V2_MEMORY_TYPES)
"""Class index -> memory type; index 0 means "nothing to remember"."""

# chosen by 5-fold cross-validation on the training split (bench/memory_eval/cv.py)
DEFAULT_NGRAM_WEIGHT = 3.0

# a full stop ends a sentence, not the one of a title or a common abbreviation (Dr. Okonkwo, Mt. Hood)
_ABBREVIATIONS = ("Dr", "Mr", "Mrs", "Ms", "Mt", "St", "Jr", "Sr", "Prof", "vs", "approx", "e.g", "i.e")
_SENTENCE_END = re.compile(
    r"(?<=[。！？!?；;\n])|(?<=\.)" + "".join(rf"(?<!\b{re.escape(a)}\.)" for a in _ABBREVIATIONS) + r"\s+"
)

ZH, EN = "zh", "en"
LANGUAGES = (ZH, EN)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_LATIN = re.compile(r"[A-Za-z]")


def language_of(text: str) -> str:
    """`en` for a text in Latin letters without any CJK character, else `zh` (the default model)."""
    return EN if _LATIN.search(text) and not _CJK.search(text) else ZH


@dataclass(frozen=True)
class Prototype:
    text: str
    type: str | None  # None: an utterance that must not be remembered
    lang: str = ZH  # which classifier learns from it (`language_of`)


@dataclass(frozen=True)
class Classification:
    text: str
    type: str | None
    confidence: float  # probability of the predicted class


def load_prototypes(lines: Iterable[str] | None = None) -> list[Prototype]:
    """The labelled utterances shipped with the package (or the given JSON lines)."""
    if lines is None:
        data = resources.files("memchat.memories").joinpath("data/prototypes.jsonl").read_text(encoding="utf-8")
        lines = data.splitlines()
    prototypes: list[Prototype] = []
    for line in lines:
        if not line.strip():
            continue
        row = json.loads(line)
        memory_type = row.get("type")
        if memory_type is not None and memory_type not in V2_MEMORY_TYPES:
            raise ValueError(f"unknown memory type in prototypes: {memory_type!r}")
        lang = str(row.get("lang", ZH))
        if lang not in LANGUAGES:
            raise ValueError(f"unknown language in prototypes: {lang!r}")
        prototypes.append(Prototype(text=str(row["text"]), type=memory_type, lang=lang))
    return prototypes


_STYLE_SLOTS = ("reply_length", "reply_language", "tone")
# 我喜欢看电影 / 我不喜欢被催 / 我害怕打雷 / 我习惯早上洗澡: a short first-person statement of a
# liking, dislike, fear or habit about nothing in front of the user (no 这个/那句/刚才/今天, no question)
_PLAIN_LIKING = re.compile(
    r"^我(?:也|还|一直|从小|平时)?(?:很|最|特别|超|非常|挺|真的|比较)?"
    r"(不喜欢|不爱|讨厌|受不了|喜欢|爱|害怕|怕|习惯)([^，,。！!？?]{1,14})[。！!]?$"
)
# the same in English: "I love Taylor Swift", "I follow the Dodgers too", "I'm allergic to shellfish"
_PLAIN_LIKING_EN = re.compile(
    r"^(?:i|i'm|i am)\s+(?:also\s+|really\s+|totally\s+|absolutely\s+|still\s+)?"
    r"(love|like|hate|can't stand|enjoy|prefer|adore|follow|drink|eat|play|watch|listen to|don't eat|don't drink|"
    r"never eat|allergic to|(?:a )?(?:huge|big) fan of)\s+([^,.!?]{2,40}?)(?:\s+too|\s+as well)?[.!]?$",
    re.IGNORECASE,
)
_LIKING_TYPES_EN = {
    "hate": BOUNDARY,
    "can't stand": BOUNDARY,
    "allergic to": FACT,
    "don't eat": FACT,
    "never eat": FACT,
}
_HERE_AND_NOW_EN = re.compile(r"\b(?:this|that|it|you|today|tonight)\b", re.IGNORECASE)
# what to call the user (LABELS.md: style), not the name (我叫小林, "my name is Lex": a fact)
_ADDRESS_ME = re.compile(r"叫我|称呼我|喊我|\b(?i:call|calling) me\s+[A-Z]")
_HERE_AND_NOW = re.compile(r"[这那]|刚|今天|今晚|现在|你")
_LIKING_TYPES = {"不喜欢": BOUNDARY, "不爱": PREFERENCE, "讨厌": BOUNDARY, "受不了": BOUNDARY, "害怕": FACT, "怕": FACT}


def _slot_type(text: str) -> str | None:
    """The type a statement's slots say it is, if it fills one: how to talk to me and what to call
    me are conversation style, a favourite or a way of eating is a preference, anything else (name, city, job, age,
    birthday, schedule, a dated event, study or work, relationship status) is a personal fact."""
    slots = read_slots(text)[0]
    if not slots:
        return None
    if any(k in _STYLE_SLOTS for k in slots) or ("name" in slots and _ADDRESS_ME.search(text)):
        return CONVERSATION_STYLE
    if any(k.startswith(("favourite:", "weekly:")) or k == "diet_plan" for k in slots):
        return PREFERENCE
    return FACT


# how a reply looks or sounds: a "don't" about these is conversation style, not a boundary
_PRESENTATION = re.compile(
    r"回复|回答|回我|说话|语气|口吻|格式|表情|颜文字|感叹号|成语|口语|书面语|字数|简短|啰嗦|"
    r"英文|英语|中文|普通话|方言|emoji|分点|列表|开头|结尾|安慰我|共情|先陪我|问我问题|一次只问"
)
# what a boundary protects: a topic, a question, pressure, comparison, a decision, a name
_PROTECTED = re.compile(r"提|问我|打听|聊|比较|比|催|决定|拍板|替我|操控|套路|PUA|贬低|开玩笑|称呼|叫我|隐私|你应该")


# the moment's state (LABELS.md: 刚到家, not a memory): "I just got here", and nothing more
_MOMENT = re.compile(
    r"^(?:我|俺)?(?:刚刚|刚|才)(?:到|下班|下课|放学|起床|醒|睡醒|吃完|吃过饭|回到|回来|出门|进门|洗完澡|忙完|上车|下车)"
    r"[^，,。！!？?]{0,4}[。！!~～]?$"
)
_MOMENT_EN = re.compile(
    r"^i(?:'ve)?\s+(?:just|only just)\s+(?:got (?:home|back|in|up|to work|to the office|off work)|woke up|"
    r"finished (?:work|dinner|lunch|breakfast)|left (?:work|the office))[.!]?$",
    re.IGNORECASE,
)


def said_for_the_moment(text: str) -> bool:
    """The moment's state (刚到家, "I just got home") or a request for the moment (`asking.asks_now`):
    nothing to keep, and nothing that changes what is kept."""
    return bool(_MOMENT.match(text) or _MOMENT_EN.match(text) or asks_now(text))


_MY_NAME = re.compile(r"\bmy name(?: is|'s)\b|我叫|我的名字", re.IGNORECASE)


def _settle(c: Classification) -> Classification:
    """A "don't" about how replies look or sound (格式, 语气, 表情, 书面语) is conversation style:
    the classifier leans to `boundary` for any 别/不要, and nothing here is protected. What to call the
    user (call me Lex, 叫我阿杰) is style too, where the classifier said fact and no name is given. The moment's
    state ("I just got to work") and a request for the moment (怎么写请假条比较正式？: `asking.py`) are
    nothing to keep, however close to a fact or a style they sound."""
    if c.type is not None and said_for_the_moment(c.text):
        return Classification(text=c.text, type=None, confidence=c.confidence)
    if c.type == BOUNDARY and _PRESENTATION.search(c.text) and not _PROTECTED.search(c.text):
        return Classification(text=c.text, type=CONVERSATION_STYLE, confidence=c.confidence)
    if c.type == FACT and _ADDRESS_ME.search(c.text) and not _MY_NAME.search(c.text):
        return Classification(text=c.text, type=CONVERSATION_STYLE, confidence=c.confidence)
    return c


def _rescue(c: Classification, min_confidence: float) -> Classification:
    """A sentence judged not worth remembering is kept when it fills a slot (name, city, job,
    schedule, reply length...), plainly states a lasting fact of the user's life or family (a pet, a
    condition, a relative's work: `lasting.py`) or a liking, dislike, fear or habit: the classifier
    has seen few of them, and they are what changes of mind change."""
    if c.type is not None or c.confidence < min_confidence:
        return c  # a memory already, or an answer too unsure to stand on
    by_slot = _slot_type(c.text)
    if by_slot is not None:
        return Classification(text=c.text, type=by_slot, confidence=0.0)
    if lasting_fact(c.text):
        return Classification(text=c.text, type=FACT, confidence=0.0)
    liking = _PLAIN_LIKING.match(c.text)
    if liking is not None and not _HERE_AND_NOW.search(liking.group(2)):
        return Classification(text=c.text, type=_LIKING_TYPES.get(liking.group(1), PREFERENCE), confidence=0.0)
    liking = _PLAIN_LIKING_EN.match(c.text)
    if liking is not None and not _HERE_AND_NOW_EN.search(liking.group(2)):
        kind = liking.group(1).lower()
        return Classification(text=c.text, type=_LIKING_TYPES_EN.get(kind, PREFERENCE), confidence=0.0)
    return c


def split_sentences(text: str) -> list[str]:
    """Sentences of a message, ending punctuation kept; a message without any is one sentence."""
    parts = [p.strip() for p in _SENTENCE_END.split(text)]
    return [p for p in parts if p]


class EmbeddingExtractor:
    """Decides remember-or-not and the type with an embedder and labelled prototypes.

    A multi-sentence message is judged sentence by sentence, so a boundary said after some
    small talk becomes a memory of its own (content = that sentence) and two memories said in
    one message can both be kept (at most MAX_CANDIDATES_PER_TURN, most confident first).
    """

    def __init__(
        self,
        embedder: Embedder,
        prototypes: Sequence[Prototype] | None = None,
        *,
        min_confidence: float = 0.0,
        l2: float = DEFAULT_L2,
        epochs: int = DEFAULT_EPOCHS,
        ngram_weight: float = DEFAULT_NGRAM_WEIGHT,
        ngram_sizes: Sequence[int] = DEFAULT_NGRAM_SIZES,
        use_shipped: bool = True,
    ) -> None:
        self._embedder = embedder
        self._prototypes = list(prototypes) if prototypes is not None else load_prototypes()
        if not self._prototypes:
            raise ValueError("the embeddings extractor needs labelled prototypes")
        self._min_confidence = min_confidence
        self._l2 = l2
        self._epochs = epochs
        self._ngram_weight = ngram_weight
        self._ngram_sizes = tuple(ngram_sizes)
        self._models: dict[str, NgramSoftmax] = {}
        self._center: Vector | None = None
        self._centers: dict[str, Vector] = {}
        self._vectors: Matrix | None = None
        self._fit_lock = threading.Lock()
        self._use_shipped = use_shipped

    def _digest(self) -> str:
        fitting = {"l2": self._l2, "epochs": self._epochs, "ngrams": [self._ngram_weight, *self._ngram_sizes]}
        langs = [p.lang for p in self._prototypes]
        types = [p.type for p in self._prototypes]
        texts = [json.dumps([p.text, lang, kind]) for p, lang, kind in zip(self._prototypes, langs, types, strict=True)]
        return made_from(texts, getattr(self._embedder, "name", type(self._embedder).__name__), fitting)

    async def prepare_vectors(self) -> None:
        """The prototypes' vectors and their mean (`center`, which similarity needs), and the
        classifiers when the shipped ones were made from these prototypes and settings (quick);
        else the vectors from the embedder (the classifiers are fitted by `prepare`)."""
        if self._vectors is not None:
            return
        shipped = load_prepared(self._digest()) if self._use_shipped else None
        if shipped is not None:
            vectors = shipped.vectors
            self._models = shipped.models
        else:
            texts = [p.text for p in self._prototypes]
            vectors = np.asarray(await self._embedder.embed_passages(texts), np.float32)
        # the shared component dedupe removes: the default language's, as its threshold was tuned on it
        default_rows = [i for i, p in enumerate(self._prototypes) if p.lang == ZH] or list(range(len(vectors)))
        self._center = vectors[default_rows].mean(axis=0)
        self._centers = {
            lang: vectors[rows].mean(axis=0)
            for lang in LANGUAGES
            if (rows := [i for i, p in enumerate(self._prototypes) if p.lang == lang])
        }
        self._vectors = vectors

    def save(self, path: Path) -> None:
        """Write the vectors and classifiers to ship them (`memories.language.prototype_vectors`)."""
        if self._vectors is None or not self._models:
            raise RuntimeError("call prepare() first")
        save_prepared(path, self._digest(), Prepared(vectors=self._vectors, models=self._models))

    async def prepare(self) -> None:
        """The vectors, then a classifier per language unless they shipped, fitted once in a worker
        thread (seconds of numpy that must not hold the event loop); the app awaits it at start-up.

        The fit is guarded by a thread lock, not an asyncio one, so that the extractor is not tied to
        one event loop: a second caller waits for the first fit and fits nothing.
        """
        if self._models:
            return
        await self.prepare_vectors()
        if self._models:
            return  # they shipped
        assert self._vectors is not None
        await asyncio.to_thread(self._fit_all, self._vectors)

    def _fit_all(self, vectors: Matrix) -> None:
        with self._fit_lock:
            if self._models:
                return
            models: dict[str, NgramSoftmax] = {}
            for lang in LANGUAGES:
                rows = [i for i, p in enumerate(self._prototypes) if p.lang == lang]
                if rows:
                    models[lang] = self._fit([self._prototypes[i] for i in rows], vectors[rows], words=lang == EN)
            self._models = models

    def _fit(self, prototypes: Sequence[Prototype], vectors: Matrix, *, words: bool) -> NgramSoftmax:
        texts = [p.text for p in prototypes]
        ngrams = CharNgrams.fit(texts, self._ngram_sizes, words=words) if self._ngram_weight > 0 else None
        classifier = SoftmaxClassifier.fit(
            features(ngrams, texts, vectors),
            [CLASSES.index(p.type) for p in prototypes],
            len(CLASSES),
            l2=self._l2,
            epochs=self._epochs,
            plain_columns=ngrams.size if ngrams is not None else 0,
            plain_weight=self._ngram_weight,
        )
        return NgramSoftmax(classifier=classifier, ngrams=ngrams)

    @property
    def center(self) -> Vector:
        """Mean prototype passage vector: the shared component dedupe removes before comparing."""
        if self._center is None:
            raise RuntimeError("call prepare_vectors() first")
        return self._center

    def language_center(self, text: str) -> Vector:
        """The mean prototype vector of the text's language (`language_of`), else `center`: what
        the text's vector is centred on where both languages are compared on one scale."""
        return self._centers.get(language_of(text), self.center)

    def _language_for(self, text: str) -> str:
        """The text's language when it has a classifier, else the default one's (or the only one)."""
        lang = language_of(text)
        return lang if lang in self._models else ZH if ZH in self._models else next(iter(self._models))

    def classify_vectors(self, texts: Sequence[str], vectors: npt.ArrayLike) -> list[Classification]:
        """Classify already embedded passages (the caller may reuse the vectors for storage)."""
        if not self._models:
            raise RuntimeError("call prepare() first")
        if not texts:
            return []
        matrix = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        by_language: dict[str, list[int]] = {}
        for i, text in enumerate(texts):
            by_language.setdefault(self._language_for(text), []).append(i)
        probabilities = np.empty((len(texts), len(CLASSES)), dtype=np.float32)
        for lang, rows in by_language.items():  # one batch per classifier
            probabilities[rows] = self._models[lang].predict_proba([texts[i] for i in rows], matrix[rows])
        results: list[Classification] = []
        for text, row in zip(texts, probabilities, strict=True):
            best = int(np.argmax(row))
            confidence = float(row[best])
            memory_type = CLASSES[best] if confidence >= self._min_confidence else None
            results.append(Classification(text=text, type=memory_type, confidence=confidence))
        return results

    async def classify(self, texts: Sequence[str]) -> list[Classification]:
        await self.prepare()
        return self.classify_vectors(texts, await self._embedder.embed_passages(list(texts)))

    async def extract(self, user_text: str | None) -> list[MemoryDraft]:
        """Same contract as the v1 `extract_candidate_memories`: this turn's user text only, at most two."""
        text = normalize(user_text)
        if text is None:
            return []
        units = split_sentences(text)
        if len(units) > 1:
            units.append(text)  # the whole message, for memories that need all their sentences
        judged = await self.classify(units)
        whole, sentences = judged[-1], judged[:-1]
        sentences = [_settle(_rescue(c, self._min_confidence)) for c in sentences]
        kept = sorted((c for c in sentences if c.type is not None), key=lambda c: -c.confidence)
        whole = _settle(_rescue(whole, self._min_confidence) if len(judged) == 1 else whole)
        if not kept and whole.type is not None:
            kept = [whole]
        drafts: list[MemoryDraft] = []
        for c in kept[:MAX_CANDIDATES_PER_TURN]:
            if c.type is None:
                continue
            facts = split_facts(c.text)
            for fact in facts:
                content = clean_content(fact)
                if content is None or len(drafts) >= MAX_FACTS_PER_TURN:
                    continue
                memory_type = (_slot_type(fact) or c.type) if len(facts) > 1 else c.type
                drafts.append(MemoryDraft(type=memory_type, content=content, importance=rule_importance(c.text)))
        return drafts
