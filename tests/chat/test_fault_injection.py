"""Random upstream failures and client disconnects; after each run the invariants hold."""

import random
from typing import Any

import httpx
import pytest

from tests.conftest import Running, auth, chat_body
from tests.invariants import assert_invariants
from tests.upstream import Reply, TestUpstream


def random_reply(rng: random.Random) -> Reply:
    deltas = [f"片段{i}" for i in range(rng.randint(1, 6))]
    kind = rng.choice(["ok", "ok", "500", "429", "cut", "empty", "no-finish", "slow"])
    if kind == "500":
        return Reply(status=500)
    if kind == "429":
        return Reply(status=429)
    if kind == "cut":
        return Reply(deltas=deltas, cut_after=rng.randint(0, len(deltas)))
    if kind == "empty":
        return Reply(no_content=True)
    if kind == "no-finish":
        return Reply(deltas=deltas, finish_reason=None)
    if kind == "slow":
        return Reply(deltas=deltas, delay_ms=5)
    return Reply(deltas=deltas)


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_random_failures_and_disconnects_keep_the_invariants(
    running: Running, user_token: str, agent: dict[str, Any], upstream: TestUpstream, seed: int
) -> None:
    rng = random.Random(seed)
    sent: list[str] = []
    for turn in range(12):
        text = f"第{turn}句 我喜欢{rng.choice(['猫', '狗', '山', '海'])}"
        upstream.script(random_reply(rng))
        body = chat_body(agent["id"], text)
        if rng.random() < 0.3:
            body["trigger"] = "regenerate-message"
        disconnect_after = rng.choice([None, None, 0, 1])
        try:
            async with running.client.stream("POST", "/api/chat", json=body, headers=auth(user_token)) as response:
                if response.status_code == 200:
                    async for index, _chunk in _enumerate(response.aiter_text()):
                        if disconnect_after is not None and index >= disconnect_after:
                            break
                else:
                    await response.aread()
                    assert response.status_code in {422, 502, 503}, response.text
                    assert response.json()["error"]["code"]
                if body["trigger"] == "submit-message":
                    sent.append(text)
        except httpx.RemoteProtocolError:
            pytest.fail("the server broke the connection")
        await running.settle()
    await assert_invariants(running.db, sent)


async def _enumerate(chunks: Any) -> Any:
    index = 0
    async for chunk in chunks:
        yield index, chunk
        index += 1
