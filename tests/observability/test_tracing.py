"""A turn's spans, collected with the SDK's in-memory exporter: one span per turn, its steps as
children; the trace id reaches the 5xx body."""

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import NoOpTracerProvider

from memchat.observability import tracing
from tests.conftest import Running, auth, chat, create_agent, signup
from tests.db.test_database_errors import memory_events_renamed
from tests.upstream import Reply, TestUpstream


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_provider(provider)
    yield exporter
    tracing.use_provider(NoOpTracerProvider())
    provider.shutdown()


def _by_name(finished: tuple[ReadableSpan, ...]) -> dict[str, ReadableSpan]:
    return {span.name: span for span in finished}


async def test_a_turn_is_one_span_with_its_steps_as_children(
    running: Running, user_token: str, agent: dict[str, object], upstream: TestUpstream, spans: InMemorySpanExporter
) -> None:
    upstream.script(Reply(text="好的"))
    response = await chat(running, user_token, str(agent["id"]), "我喜欢猫")
    assert response.text == "好的"
    named = _by_name(spans.get_finished_spans())
    turn = named["memchat.turn"]
    request = named["POST /api/chat"]
    assert turn.parent is not None
    assert turn.parent.span_id == request.context.span_id  # the turn is a child of its request
    assert turn.attributes is not None
    assert turn.attributes["memchat.outcome"] == "completed"
    assert turn.attributes["memchat.wire"] == "text"
    for step in ("memchat.commit_1", "memchat.upstream", "memchat.commit_2", "memchat.extraction"):
        child = named[step]
        assert child.parent is not None, step
        assert child.parent.span_id == turn.context.span_id, step
        assert child.context.trace_id == turn.context.trace_id, step
    ordered = [named[s].start_time or 0 for s in ("memchat.commit_1", "memchat.upstream", "memchat.commit_2")]
    assert ordered == sorted(ordered)


async def test_a_failed_upstream_marks_the_turn_span_as_an_error(
    running: Running, user_token: str, agent: dict[str, object], upstream: TestUpstream, spans: InMemorySpanExporter
) -> None:
    upstream.script(Reply(status=400))
    assert (await chat(running, user_token, str(agent["id"]), "在吗")).status_code == 502
    named = _by_name(spans.get_finished_spans())
    turn = named["memchat.turn"]
    assert turn.attributes is not None
    assert turn.attributes["memchat.outcome"] == "failed"
    assert not turn.status.is_ok
    assert "memchat.commit_2" not in named


async def test_a_5xx_body_carries_the_trace_id_of_its_request_span(
    running: Running, database_url: str, spans: InMemorySpanExporter
) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    async with memory_events_renamed(database_url):  # a real 500: the schema lost a table
        response = await running.client.post(
            f"/api/agents/{agent['id']}/memories",
            json={"type": "preference", "content": "喜欢猫", "importance": 3},
            headers={**auth(token), "traceparent": f"00-{'ab' * 16}-{'cd' * 8}-01"},
        )
    assert response.status_code == 500
    error = response.json()["error"]
    # the caller's trace (W3C traceparent) goes on through memchat
    assert error["traceId"] == "ab" * 16
    assert error["requestId"] == response.headers["x-request-id"]
    request_span = _by_name(spans.get_finished_spans())["POST /api/agents/{agent_id}/memories"]
    assert format(request_span.context.trace_id, "032x") == error["traceId"]
    assert request_span.attributes is not None
    assert request_span.attributes["http.response.status_code"] == 500
