"""Property-based tests of normalize, the summary, the extraction rules, and of /api/chat with hostile bodies."""

import json
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memchat.chat.summary import build_conversation_summary
from memchat.memories.language.rules import extract_candidate_memories
from memchat.memories.types import MEMORY_TYPES
from memchat.text import normalize
from tests.surrogates import LONE_SURROGATES, string_paths, with_surrogate

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


def any_text(max_size: int) -> st.SearchStrategy[str]:
    """Any string JSON can carry, lone surrogates ("\\ud800") included."""
    return st.text(max_size=max_size) | st.text(alphabet=st.characters(exclude_categories=()), max_size=max_size)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | any_text(20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(any_text(10), children, max_size=4),
    max_leaves=12,
)
ui_part = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "step-start", "reasoning", 3])},
    optional={"text": st.one_of(any_text(40), st.integers(), st.none()), "state": any_text(5)},
)
ui_message = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "system", "tool", None])},
    optional={
        "id": st.one_of(any_text(30), st.integers()),
        "parts": st.lists(ui_part, max_size=3) | json_values,
    },
)
chat_bodies = st.fixed_dictionaries(
    {},
    optional={
        "messages": st.lists(ui_message, max_size=4) | json_values,
        "trigger": st.sampled_from(["submit-message", "regenerate-message", "other"]),
        "messageId": st.one_of(any_text(10), st.integers()),
        "conversation": st.dictionaries(st.sampled_from(["name", "status", "chemistry"]), json_values, max_size=3),
        "conversationId": any_text(10),
    },
)


JSON = {"Content-Type": "application/json"}


def _json(body: Any) -> bytes:
    """JSON with every non-ASCII character escaped, so that lone surrogates travel as \\udXXX."""
    return json.dumps(body, ensure_ascii=True).encode()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=chat_bodies, with_agent=st.booleans())
def test_chat_never_answers_5xx_to_random_bodies(
    sync_server: dict[str, Any], body: dict[str, Any], with_agent: bool
) -> None:
    client = sync_server["client"]
    if with_agent:
        body = {**body, "agentId": sync_server["agent_id"]}
    response = client.post("/api/chat", content=_json(body), headers=JSON)
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
    response = sync_server["client"].post(path.format(agent=sync_server["agent_id"]), content=_json(body), headers=JSON)
    assert response.status_code < 500, response.text


VALID_BODIES = {
    "/api/chat": lambda agent: {
        "id": "chat-1",
        "agentId": agent,
        "trigger": "submit-message",
        "messages": [
            {"id": "m-a", "role": "assistant", "parts": [{"type": "text", "text": "早"}], "metadata": {"k": "v"}},
            {"id": "m-u", "role": "user", "parts": [{"type": "text", "text": "你好"}]},
        ],
        "conversation": {"name": "小林", "status": "在线", "profileNote": "备注"},
    },
    "/api/agents": lambda agent: {"name": "名字", "handle": "@h", "defaultPrompt": "提示", "profile": {"topic": "猫"}},
    "/api/agents/{agent}/memories": lambda agent: {"type": "preference", "content": "喜欢猫", "importance": 3},
    "/api/auth/signup": lambda agent: {"email": "s@example.com", "password": "password-1", "displayName": "S"},
    "/api/auth/login": lambda agent: {"email": "s@example.com", "password": "password-1"},
}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    path=st.sampled_from(sorted(VALID_BODIES)),
    surrogate=LONE_SURROGATES,
    choice=st.integers(min_value=0),
    at=st.integers(min_value=0),
)
def test_a_lone_surrogate_in_any_string_field_is_a_422_that_names_it(
    sync_server: dict[str, Any], path: str, surrogate: str, choice: int, at: int
) -> None:
    client = sync_server["client"]
    body = VALID_BODIES[path](sync_server["agent_id"])
    paths = string_paths(body)
    field = paths[choice % len(paths)]
    response = client.post(
        path.format(agent=sync_server["agent_id"]),
        content=_json(with_surrogate(body, field, surrogate, at)),
        headers=JSON,
    )
    assert response.status_code == 422, (field, response.text)
    located = response.json()["error"]["message"].split(":")[0]
    assert ".".join(map(str, field)).startswith(located), (field, located)  # the field, or the object holding it
    messages = client.get(f"/api/agents/{sync_server['agent_id']}/messages").json()["messages"]
    assert messages == []
