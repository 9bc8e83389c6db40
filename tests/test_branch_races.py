"""Changes to a conversation's live branch racing each other across two `memchat serve` on one
PostgreSQL (with Redis), and on one instance on both databases: a new message, an edit, a
regenerate, a retry, a stop, two at a time (and one edit three times at once), many rounds. The
database picks the winner; the loser is a 409; after every round the live branch holds: one live
reply per live user message (none only where a stop took the turn), no reply to a superseded
message, the count equals the live rows, and without a new message the history alternates."""

import asyncio
import itertools
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from memchat.db.engine import Database, create_database
from memchat.models import Conversation, Message
from memchat.models.message import SUPERSEDED
from memchat.settings import Settings
from tests.conftest import Running, auth, chat_body, create_agent, signup
from tests.test_many_instances import first_user, started
from tests.upstream import DEFAULT_REPLY, TestUpstream

ROUNDS = 10
KINDS = ("new", "edit", "regenerate", "retry", "stop")
BROKEN = 0  # a chat whose body broke off: its turn ended as failed (a stop took it before its first text)


@pytest.fixture
async def db(postgres_url: str) -> AsyncIterator[Database]:
    database = create_database(Settings(_env_file=None, database_url=postgres_url).database)
    yield database
    await database.dispose()


def _body(kind: str, agent_id: str, conversation_id: str, first_id: str, n: int) -> dict[str, Any]:
    extra = {"conversationId": conversation_id}
    if kind == "new":
        return chat_body(agent_id, f"新消息{n}", **extra)
    if kind == "edit":
        return chat_body(agent_id, f"改过的{n}", message_id=first_id, messageId=first_id, **extra)
    if kind == "regenerate":
        return chat_body(agent_id, "你好", trigger="regenerate-message", **extra)
    return chat_body(agent_id, "你好", message_id=first_id, **extra)  # retry of the first message


async def _branch(db: Database, conversation_id: str) -> tuple[list[Message], int]:
    async with db.read() as session:
        rows = (
            await session.execute(
                select(Message)
                .where(Message.conversation_id == conversation_id, Message.status != SUPERSEDED)
                .order_by(Message.seq)
            )
        ).scalars()
        count = (
            await session.execute(select(Conversation.message_count).where(Conversation.id == conversation_id))
        ).scalar_one()
        return list(rows), int(count)


def _check(live: list[Message], count: int, kinds: tuple[str, ...], codes: list[int]) -> None:
    where = f"{kinds} {codes}: {[(m.role, m.content, m.reply_to_id, m.reply_state) for m in live]}"
    allowed = {200, 409}
    if {"edit", "retry"} <= set(kinds):
        allowed.add(422)  # a retry of the first message after an edit took its id for another text
    if "stop" in kinds:
        allowed |= {204, BROKEN}
    assert set(codes) <= allowed, where
    assert 200 in codes or "stop" in kinds, where
    users = {m.id: m for m in live if m.role == "user"}
    replies = [m.reply_to_id for m in live if m.role == "assistant"]
    assert all(reply_to in users for reply_to in replies), f"a reply to a superseded message: {where}"
    assert len(set(replies)) == len(replies), f"two live replies to one message: {where}"
    unanswered = [m for m in users.values() if m.id not in replies]
    # only a stop leaves a message without a reply, and then its turn did not end as answered
    assert all("stop" in kinds and m.reply_state != "done" for m in unanswered), f"no reply: {where}"
    assert count == len(live), f"count {count}: {where}"
    if "new" not in kinds:  # two new messages may both stream at once; nothing else may
        answered = [m.role for m in live if m not in unanswered]
        assert answered == ["user", "assistant"] * (len(answered) // 2), where


async def _round(
    client: httpx.AsyncClient, urls: list[str], token: str, agent_id: str, kinds: tuple[str, ...], n: int
) -> tuple[str, list[int]]:
    made = await client.post(f"{urls[0]}/api/agents/{agent_id}/conversations", json={}, headers=auth(token))
    assert made.status_code == 201, made.text
    conversation_id = made.json()["id"]
    first_id = f"m-{uuid.uuid4().hex[:10]}"
    first = await client.post(
        f"{urls[1]}/api/chat",
        json=chat_body(agent_id, "你好", message_id=first_id, conversationId=conversation_id),
        headers=auth(token),
    )
    assert first.text == DEFAULT_REPLY

    async def send(i: int, kind: str) -> int:
        url = urls[i % 2]
        if kind == "stop":
            return (await client.post(f"{url}/api/chat/{conversation_id}/stop", headers=auth(token))).status_code
        body = _body(kind, agent_id, conversation_id, first_id, n * 10 + i)
        try:
            return (await client.post(f"{url}/api/chat", json=body, headers=auth(token))).status_code
        except httpx.RemoteProtocolError:
            return BROKEN

    return conversation_id, list(await asyncio.gather(*(send(i, kind) for i, kind in enumerate(kinds))))


PAIRS = [*itertools.combinations_with_replacement(KINDS, 2), ("edit", "edit", "edit")]


async def _race(urls: list[str], token: str, agent_id: str, db: Database, rounds: int) -> None:
    broken: list[str] = []
    async with httpx.AsyncClient(timeout=30, verify=False) as client:
        for n in range(rounds):
            for kinds in PAIRS:
                conversation_id, codes = await _round(client, urls, token, agent_id, kinds, n)
                live, count = await _branch(db, conversation_id)
                try:
                    _check(live, count, kinds, codes)
                except AssertionError as exc:
                    broken.append(str(exc).splitlines()[0])
    assert broken == [], f"{len(broken)} of {rounds * len(PAIRS)} rounds broke the branch:\n" + "\n".join(broken)


async def test_branch_changes_racing_across_two_instances_leave_one_live_branch(
    postgres_url: str, upstream: TestUpstream, tmp_path: Path, db: Database
) -> None:
    async with started(postgres_url, upstream, tmp_path) as servers:
        token, agent = await first_user(servers[0])
        await _race([s.url for s in servers], token, str(agent["id"]), db, ROUNDS)


async def test_branch_changes_racing_on_one_instance_leave_one_live_branch(running: Running) -> None:
    token = await signup(running.client)
    agent = await create_agent(running.client, token)
    await _race([running.base_url] * 2, token, agent["id"], running.db, ROUNDS // 2)
