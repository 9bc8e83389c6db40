"""Property-based tests of normalize, the summary, the extraction rules, and of /api/chat with hostile bodies."""

import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memchat.chat.summary import build_conversation_summary
from memchat.memories.rules import MEMORY_TYPES, extract_candidate_memories
from memchat.text import normalize

texts = st.text(alphabet=st.characters(codec="utf-8"), max_size=300)
roles = st.sampled_from(["user", "assistant"])


@given(texts)
def test_normalize_properties(raw: str) -> None:
    out = normalize(raw)
    if out is None:
        assert normalize(raw.strip()) is None
        return
    assert out == out.strip()
    assert "\r" not in out
    assert not re.search(r"[\x00-\x08\x0b-\x1f]", out)
    assert normalize(out) == out  # idempotent


@given(st.one_of(st.none(), texts), st.lists(st.tuples(roles, texts), max_size=20), texts, texts.filter(str.strip))
def test_summary_properties(previous: str | None, recent: list[tuple[str, str]], user: str, assistant: str) -> None:
    summary = build_conversation_summary(previous, recent, user, assistant)
    assert len(summary) <= 1600
    assert summary == summary.strip()
    assert not re.search(r"\s\s", summary)
    tail = re.sub(r"\s+", " ", "Agent：" + assistant).strip()
    assert summary.endswith(tail[-1600:])


@given(texts)
def test_extraction_properties(raw: str) -> None:
    candidates = extract_candidate_memories(raw)
    text = normalize(raw)
    assert len(candidates) <= 2
    gate = re.compile(r"我|不喜欢|喜欢|希望|想要|以后|记住|别|不要|需要|习惯|倾向")
    assert bool(candidates) == bool(text and gate.search(text))
    for candidate in candidates:
        assert text is not None
        assert candidate.type in MEMORY_TYPES
        assert candidate.importance in (3, 5)
        assert candidate.content == text[:500]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)
ui_part = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "step-start", "reasoning", 3])},
    optional={"text": st.one_of(st.text(max_size=40), st.integers(), st.none()), "state": st.text(max_size=5)},
)
ui_message = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "system", "tool", None])},
    optional={
        "id": st.one_of(st.text(max_size=30), st.integers()),
        "parts": st.lists(ui_part, max_size=3) | json_values,
    },
)
chat_bodies = st.fixed_dictionaries(
    {},
    optional={
        "messages": st.lists(ui_message, max_size=4) | json_values,
        "trigger": st.sampled_from(["submit-message", "regenerate-message", "other"]),
        "messageId": st.one_of(st.text(max_size=10), st.integers()),
        "conversation": st.dictionaries(st.sampled_from(["name", "status", "chemistry"]), json_values, max_size=3),
        "conversationId": st.text(max_size=10),
    },
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=chat_bodies, with_agent=st.booleans())
def test_chat_never_answers_5xx_to_random_bodies(
    sync_server: dict[str, Any], body: dict[str, Any], with_agent: bool
) -> None:
    client = sync_server["client"]
    if with_agent:
        body = {**body, "agentId": sync_server["agent_id"]}
    response = client.post("/api/chat", json=body)
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        error = response.json()["error"]
        assert set(error) == {"code", "message"}
        assert "Traceback" not in error["message"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=json_values,
    path=st.sampled_from(["/api/agents", "/api/auth/signup", "/api/auth/login", "/api/agents/{agent}/memories"]),
)
def test_other_routes_never_answer_5xx(sync_server: dict[str, Any], body: Any, path: str) -> None:
    response = sync_server["client"].post(path.format(agent=sync_server["agent_id"]), json=body)
    assert response.status_code < 500, response.text
