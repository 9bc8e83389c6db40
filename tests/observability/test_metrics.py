"""/metrics after real turns: the counters and histograms move as the turns went."""

from pathlib import Path
from typing import Any

import httpx

from memchat.settings import Settings
from tests.chat.test_ui_stream import read_until_text
from tests.conftest import Running, auth, chat, chat_body, create_agent, serve_app, signup
from tests.observability.scrape import moved, scrape, value
from tests.upstream import Reply, TestUpstream


async def _stopped_ui_turn(running: Running, token: str, agent_id: str, upstream: TestUpstream) -> None:
    upstream.script(Reply(deltas=["先说", "一半", "再说"], hold_after=1))
    posted: list[str] = []
    body = chat_body(agent_id, "讲个故事")
    async with running.client.stream("POST", "/api/ui/chat", json=body, headers=auth(token)) as response:
        chunks = response.aiter_text()
        await read_until_text(chunks, posted)
        stopped = await running.client.post(f"/api/chat/{agent_id}/stop", headers=auth(token))
        assert stopped.status_code == 204
        async for chunk in chunks:
            posted.append(chunk)
    upstream.release()
    await running.settle()


async def test_turns_move_the_counters_and_histograms(settings: Settings, upstream: TestUpstream) -> None:
    async with serve_app(settings, llm_max_retries=1) as running:
        token = await signup(running.client)
        agent = await create_agent(running.client, token)
        before = await scrape(running.client)

        upstream.script(Reply(text="好的"))
        assert (await chat(running, token, agent["id"], "你好")).text == "好的"
        upstream.script(Reply(status=400))  # not retried: the turn fails at once
        assert (await chat(running, token, agent["id"], "在吗")).status_code == 502
        upstream.script(Reply(status=503), Reply(text="这次好了"))  # one retry, then text
        assert (await chat(running, token, agent["id"], "再试")).text == "这次好了"
        await _stopped_ui_turn(running, token, agent["id"], upstream)

        after = await scrape(running.client)

    def turns(outcome: str, wire: str) -> float:
        return moved(before, after, "memchat_turns_total", outcome=outcome, wire=wire)

    assert turns("completed", "text") == 2
    assert turns("failed", "text") == 1
    assert turns("stopped", "ui") == 1
    assert moved(before, after, "memchat_turns_total") == 4
    assert moved(before, after, "memchat_upstream_errors_total") == 2
    assert moved(before, after, "memchat_upstream_retries_total") == 1
    # one first token each for the three turns that got text; the failed one waited too
    assert moved(before, after, "memchat_upstream_ttft_seconds_count") == 4
    # added time to first byte and duration: one each per turn that answered
    assert moved(before, after, "memchat_turn_added_ttfb_seconds_count", wire="text") == 2
    assert moved(before, after, "memchat_turn_added_ttfb_seconds_count", wire="ui") == 1
    assert moved(before, after, "memchat_turn_duration_seconds_count") == 4
    assert moved(before, after, "memchat_commit_duration_seconds_count", point="1") == 4
    assert moved(before, after, "memchat_commit_duration_seconds_count", point="2") == 3
    # every stream is over: the gauge is back where it was
    assert value(after, "memchat_active_streams") == value(before, "memchat_active_streams")
    assert moved(before, after, "memchat_http_requests_total", route="/api/chat", method="POST", status="200") == 2
    assert moved(before, after, "memchat_http_requests_total", route="/api/chat", method="POST", status="502") == 1
    assert moved(before, after, "memchat_http_requests_total", route="/api/ui/chat", status="200") == 1
    # each commit point 1 waited for its write connection (or SQLite's one writer)
    assert moved(before, after, "memchat_db_write_wait_seconds_count") >= 4
    for (name, labels), _ in after.items():
        keys = {key for key, _ in labels}
        assert not keys & {"user", "user_id", "agent", "agent_id", "conversation", "conversation_id"}, name


async def test_refusals_and_the_pool_are_counted(settings: Settings, upstream: TestUpstream) -> None:
    async with serve_app(settings, chat_rate_limit_per_minute=1) as running:
        token = await signup(running.client)
        agent = await create_agent(running.client, token)
        before = await scrape(running.client)
        upstream.script(Reply(text="好的"))
        assert (await chat(running, token, agent["id"], "一")).status_code == 200
        refused = await chat(running, token, agent["id"], "二")
        assert refused.status_code == 429
        after = await scrape(running.client)
        assert moved(before, after, "memchat_refusals_total", code=refused.json()["error"]["code"]) == 1
        # connections were taken from the pool and all given back
        assert value(after, "memchat_db_pool_in_use", pool="main") == value(
            before, "memchat_db_pool_in_use", pool="main"
        )
        assert moved(before, after, "memchat_http_requests_total", status="429") == 1


async def test_metrics_can_be_turned_off_or_put_behind_a_token(settings: Settings, upstream: TestUpstream) -> None:
    async with serve_app(settings, metrics=False) as running:
        off = await running.client.get("/metrics")
        assert off.status_code == 404
        assert off.json()["error"]["code"] == "not_found"
    async with serve_app(settings, metrics_token="scrape-secret") as running:
        refused = await running.client.get("/metrics")
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "unauthorized"
        wrong = await running.client.get("/metrics", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        samples = await scrape(running.client, Authorization="Bearer scrape-secret")
        assert value(samples, "memchat_http_requests_total", route="/metrics", status="401") >= 2


async def test_probe_and_scrape_requests_are_counted_by_route_template(running: Running, agent: dict[str, Any]) -> None:
    before = await scrape(running.client)
    token = await signup(running.client)
    await running.client.get(f"/api/agents/{agent['id']}", headers=auth(token))  # another user's: 404
    await running.client.get("/api/no/such/route")
    after = await scrape(running.client)
    assert moved(before, after, "memchat_http_requests_total", route="/api/agents/{agent_id}", status="404") == 1
    assert moved(before, after, "memchat_http_requests_total", route="unmatched", status="404") == 1
    assert all(agent["id"] not in str(labels) for (_, labels) in after)


async def test_two_workers_add_up_their_turns(postgres_url: str, upstream: TestUpstream, tmp_path: Path) -> None:
    from tests.serve import Server, free_port, server_env
    from tests.test_many_instances import REDIS, first_user

    env = server_env(postgres_url, upstream, tmp_path, **REDIS, PROMETHEUS_MULTIPROC_DIR=str(tmp_path / "prom"))
    server = Server(env, free_port(), tmp_path / "workers.log", args=("--workers", "2"))
    await server.start()
    try:
        token, agent = await first_user(server)
        upstream.script(*(Reply(text=f"回答{i}") for i in range(6)))
        pids: set[str] = set()
        for i in range(6):  # a new connection each time: the workers share the socket
            async with httpx.AsyncClient(timeout=30, verify=False) as client:
                response = await client.post(
                    f"{server.url}/api/chat", json=chat_body(agent["id"], f"问题{i}"), headers=auth(token)
                )
                assert response.text == f"回答{i}"
        # whichever worker answers the scrape, it reports both workers' turns
        for _ in range(4):
            async with httpx.AsyncClient(base_url=server.url, timeout=30, verify=False) as client:
                samples = await scrape(client)
            assert value(samples, "memchat_turns_total", outcome="completed", wire="text") == 6
            assert value(samples, "memchat_commit_duration_seconds_count", point="1") == 6
            pids |= {p.name for p in (tmp_path / "prom").iterdir() if p.name.startswith("histogram_")}
        assert len(pids) >= 2  # the workers (and the parent that imported the app) write values there
    finally:
        server.stop()


async def test_the_server_measures_its_own_stream_lateness(running: Running, upstream: TestUpstream) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    before = await scrape(running.client)
    deltas = ["一", "二", "三", "四", "五"]
    upstream.script(Reply(deltas=deltas, delay_ms=80))  # paced: each delta its own batch as a rule
    assert (await chat(running, token, agent["id"], "慢慢说")).text == "".join(deltas)
    after = await scrape(running.client)
    # the first delta answers the request (the added time to first byte); each later one, or a few
    # read together on a busy machine, waited in the relay for the response: one observation a batch
    batches = moved(before, after, "memchat_stream_delta_delay_seconds_count")
    assert 1 <= batches <= len(deltas) - 1
    assert moved(before, after, "memchat_stream_delta_delay_seconds_sum") >= 0
    # the reply took at least 4 x 80 ms: the loop's 100 ms timer fired meanwhile and was measured
    assert moved(before, after, "memchat_event_loop_lag_seconds_count") >= 1
