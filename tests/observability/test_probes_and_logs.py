"""/livez and /readyz; the request id on responses and log lines; JSON logs without probe noise."""

import json
from pathlib import Path

import httpx

from memchat.settings import Settings
from tests.conftest import Running, auth, chat_body, create_agent, hold_write_lock, serve_app, signup
from tests.serve import Server, free_port, server_env
from tests.upstream import Reply, TestUpstream

BUSY = {"sqlite_busy_timeout_ms": 100, "database_lock_timeout_ms": 100}


async def test_livez_answers_while_readyz_says_the_database_cannot_be_written(
    settings: Settings, database_url: str
) -> None:
    async with serve_app(settings, **BUSY) as running:
        assert (await running.client.get("/livez")).json() == {"status": "ok"}
        assert (await running.client.get("/readyz")).json() == {"status": "ok"}
        lock = await hold_write_lock(database_url)
        try:
            ready = await running.client.get("/readyz", timeout=10)
            live = await running.client.get("/livez")
        finally:
            await lock.release()
        assert ready.status_code == 503
        assert ready.json()["error"]["code"] == "database_busy"
        assert live.status_code == 200
        assert (await running.client.get("/readyz")).status_code == 200


async def test_the_request_id_is_taken_or_made_and_returned(running: Running) -> None:
    given = await running.client.get("/livez", headers={"X-Request-ID": "edge-42.a"})
    assert given.headers["x-request-id"] == "edge-42.a"
    made = await running.client.get("/livez")
    other = await running.client.get("/livez")
    assert len(made.headers["x-request-id"]) == 32
    assert made.headers["x-request-id"] != other.headers["x-request-id"]
    # an id with spaces, quotes or that is too long is not echoed into logs: a new one is made
    for hostile in ('a b"c', "x" * 200):
        replaced = await running.client.get("/livez", headers={"X-Request-ID": hostile})
        assert replaced.headers["x-request-id"] not in (hostile, "")
        assert len(replaced.headers["x-request-id"]) == 32
    # errors too
    missing = await running.client.get("/api/agents/nope", headers={"X-Request-ID": "r-404"})
    assert missing.status_code == 401
    assert missing.headers["x-request-id"] == "r-404"


async def test_json_logs_carry_the_request_id_and_leave_out_probes_and_secrets(
    upstream: TestUpstream, tmp_path: Path, sqlite_url: str
) -> None:
    # a log format, not a database behaviour: one backend suffices
    env = server_env(sqlite_url, upstream, tmp_path, MEMCHAT_LOG_FORMAT="json")
    log = tmp_path / "server.log"
    server = Server(env, free_port(), log, args=("--migrate", "--log-level", "info"))
    await server.start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30, verify=False) as client:
            token = await signup(client, password="a secret password 9")
            agent = await create_agent(client, token)
            for _ in range(3):
                assert (await client.get("/healthz")).status_code == 200
                assert (await client.get("/metrics")).status_code == 200
            upstream.script(Reply(text="好的"))
            body = chat_body(agent["id"], "我的秘密是蓝色的猫")
            answered = await client.post("/api/chat", json=body, headers={**auth(token), "X-Request-ID": "turn-7"})
            assert answered.text == "好的"
    finally:
        server.stop()
    lines = [line for line in log.read_text().splitlines() if line.startswith("{")]
    records = [json.loads(line) for line in lines]
    assert records, log.read_text()
    assert all({"time", "level", "logger", "message", "request_id"} <= record.keys() for record in records)
    turn_lines = [r for r in records if r["request_id"] == "turn-7"]
    assert any("/api/chat" in r["message"] for r in turn_lines), turn_lines
    assert not any("/healthz" in r["message"] or "/metrics" in r["message"] for r in records)
    text = log.read_text() + json.dumps(records, ensure_ascii=False)
    for secret in ("a secret password 9", token, "我的秘密是蓝色的猫", "蓝色的猫"):
        assert secret not in text
