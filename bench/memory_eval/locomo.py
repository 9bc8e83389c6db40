"""LoCoMo through memchat: import each conversation, then score memchat's recall (CPU) or answers (LLM).

    .venv/bin/python -m bench.memory_eval.locomo PATH/locomo10.zip --extractor rules embeddings
    .venv/bin/python -m bench.memory_eval.locomo PATH/locomo10.zip --extractor embeddings \\
        --llm-base-url http://127.0.0.1:8000/v1 --model M --judge-model M --questions 200

Each conversation is imported through POST /api/agents/{id}/import of a real memchat (uvicorn on
loopback, a fresh SQLite file), speaker A as the user, and memory extraction over it runs as it
would for any import. Then, for each question (categories 1-4):
- evidence recall@k (no LLM): does one of the question's evidence turns (dia_ids) appear as the
  source message of a memory in the top k of memchat's recall for the question, k = the prompt's
  memory limit (MEMCHAT_MEMORY_INJECTION_LIMIT). memchat's memories come from the user's messages,
  so evidence said only by speaker B can never be found: `user evidence` is that ceiling.
- J (with --llm-base-url): the model answers from those k memories, and the judge labels the answer
  CORRECT or WRONG against the gold one; J is the share labelled CORRECT, as in the mem0 paper. The
  prompts are the project's (locomo_judge.py); --answer-prompt FILE and --judge-prompt FILE replace
  them with templates holding {memories} and {question}, and {question}, {gold} and {answer}
  ({{name}} for a literal {name}).
bench/memory_eval/README.md has the figures and the exact commands.
"""

import argparse
import asyncio
import json
import random
import socket
import subprocess
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from bench.memory_eval.locomo_data import CATEGORIES, Conversation, Question, load_locomo
from bench.memory_eval.locomo_judge import (
    ANSWER_FIELDS,
    ANSWER_PROMPT,
    JUDGE_FIELDS,
    JUDGE_PROMPT,
    Judge,
    PromptError,
    load_prompt,
)
from sqlalchemy import select

from memchat.app import AppState, create_app
from memchat.db.engine import create_database
from memchat.db.migrate import upgrade
from memchat.memories.types import StoredMemory
from memchat.models import Memory, Message
from memchat.settings import Settings


@dataclass
class Imported:
    conversation: Conversation
    agent_id: str
    source_to_dia: dict[str, str]  # memchat message id -> dia_id
    message_at: dict[str, int]  # memchat message id -> created_at_ms
    seconds: float


@dataclass
class Scores:
    hits: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    ceiling: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    stored: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    memories: int = 0
    import_s: float = 0.0

    def table(self) -> dict[str, Any]:
        def share(values: dict[int, list[int]], cats: list[int]) -> float:
            flat = [v for c in cats for v in values[c]]
            return round(sum(flat) / len(flat), 3) if flat else 0.0

        rows: dict[str, Any] = {}
        for cat, name in [*CATEGORIES.items(), (0, "all")]:
            cats = list(CATEGORIES) if cat == 0 else [cat]
            rows[name] = {
                "questions": sum(len(self.hits[c]) for c in cats),
                "recall_at_k": share(self.hits, cats),
                "evidence_in_any_memory": share(self.stored, cats),
                "user_evidence": share(self.ceiling, cats),
            }
        return rows


async def serve_memchat(settings: Settings) -> tuple[uvicorn.Server, "asyncio.Task[None]", str, AppState]:
    """A migrated memchat on loopback (uvicorn, a port of its own): the server, its task, its URL, its state."""
    db = create_database(settings.database)
    await upgrade(db.engine)
    await db.dispose()
    app = create_app(settings)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on", timeout_keep_alive=600))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    state: AppState = app.state.memchat
    return server, task, f"http://127.0.0.1:{sock.getsockname()[1]}", state


async def _import(client: httpx.AsyncClient, token: str, state: AppState, conv: Conversation) -> Imported:
    headers = {"Authorization": f"Bearer {token}"}
    agent = await client.post("/api/agents", json={"name": conv.speaker_b, "handle": "@b"}, headers=headers)
    agent_id = agent.json()["id"]
    started = time.perf_counter()
    body = {"messages": conv.messages}
    # A retried POST is the same import (its id is the body's hash): it lands once.
    imported = await _retried(lambda: client.post(f"/api/agents/{agent_id}/import", json=body, headers=headers))
    url = f"/api/agents/{agent_id}/imports/{imported['id']}"
    while imported["state"] != "done":  # the progress a console shows, polled
        await asyncio.sleep(0.5)
        imported = await _retried(lambda: client.get(url, headers=headers))
    seconds = time.perf_counter() - started
    async with state.db.read() as session:
        rows = await session.execute(
            select(Message.id, Message.client_message_id, Message.created_at_ms).where(
                Message.conversation_id == imported["conversationId"]
            )
        )
        source_to_dia, message_at = {}, {}
        for message_id, client_id, at in rows:
            index = int(str(client_id).rsplit(":", 1)[1])
            source_to_dia[message_id] = conv.dia_ids[index]
            message_at[message_id] = int(at)
    return Imported(conv, agent_id, source_to_dia, message_at, seconds)


async def _retried(send: Callable[[], Awaitable[httpx.Response]], attempts: int = 5) -> Any:
    """The JSON of a request, sent again when the connection drops (a keep-alive closed under load)."""
    for attempt in range(attempts):
        try:
            response = await send()
            response.raise_for_status()
            return response.json()
        except httpx.TransportError:
            if attempt == attempts - 1:
                raise
            await asyncio.sleep(1.0)
    raise AssertionError("unreachable")


async def recall(state: AppState, agent_id: str, question: str) -> list[StoredMemory]:
    """The memories memchat's prompt would carry for this question as the user's message."""
    pipeline = state.chat.memory
    active = await state.db.run_write(pipeline.read_for_prompt, agent_id)
    return await pipeline.recall(question, active)


def _user_evidence(imported: Imported, question: Question) -> bool:
    conv = imported.conversation
    said_by = dict(zip(conv.dia_ids, conv.speakers, strict=True))
    return any(said_by.get(d) == conv.speaker_a for d in question.evidence)


async def run_extractor(
    conversations: list[Conversation], extractor: str, args: argparse.Namespace, judge: Judge | None
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        flat: dict[str, Any] = {
            "database_url": f"sqlite+aiosqlite:///{tmp}/locomo.db",
            "data_dir": Path(tmp) / "data",
            "llm_base_url": args.llm_base_url or "http://127.0.0.1:9/v1",
            "llm_model": args.model or "none",
            "jwt_secret": "locomo-bench-secret-0123456789abcdef",
            "chat_rate_limit_per_minute": 0,
            "memory_extractor": extractor,
            "memory_recall": args.recall,
            # a loaded machine must not turn similarity off (the turn's 1 s bound is for live chat)
            "memory_recall_timeout_s": 60.0,
            "web_dist_dir": Path(tmp) / "no-console",
            "gc_freeze_on_start": False,
        }
        if args.injection_limit is not None:
            flat["memory_injection_limit"] = args.injection_limit
        settings = Settings(_env_file=None, **flat)
        server, task, base_url, state = await serve_memchat(settings)
        try:
            async with httpx.AsyncClient(base_url=base_url, timeout=600) as client:
                signup = await client.post(
                    "/api/auth/signup", json={"email": "locomo@example.com", "password": "locomo bench 1"}
                )
                token = signup.json()["token"]
                imported = await asyncio.gather(*(_import(client, token, state, c) for c in conversations))
                return await _score(state, imported, settings.memory.injection_limit, args, judge)
        finally:
            server.should_exit = True
            await task


async def _score(
    state: AppState, imported: list[Imported], k: int, args: argparse.Namespace, judge: Judge | None
) -> dict[str, Any]:
    scores = Scores(import_s=max(i.seconds for i in imported))
    answered: list[tuple[Question, list[str]]] = []
    for item in imported:
        async with state.db.read() as session:
            rows = await session.execute(
                select(Memory.id, Memory.source_message_id).where(
                    Memory.agent_id == item.agent_id, Memory.status == "active"
                )
            )
            source_of = {memory_id: str(source) for memory_id, source in rows}
        scores.memories += len(source_of)
        stored = {item.source_to_dia.get(s) for s in source_of.values()}
        for question in item.conversation.questions:
            top = await recall(state, item.agent_id, question.question)
            found = {item.source_to_dia.get(source_of.get(m.id, "")) for m in top}
            evidence = set(question.evidence)
            scores.hits[question.category].append(int(bool(found & evidence)))
            scores.stored[question.category].append(int(bool(stored & evidence)))
            scores.ceiling[question.category].append(int(_user_evidence(item, question)))
            lines = [f"{_day(item.message_at.get(source_of.get(m.id, '')))}: {m.content}" for m in top]
            answered.append((question, lines))
    result: dict[str, Any] = {"k": k, "memories": scores.memories, "import_s": round(scores.import_s, 1)}
    result["categories"] = scores.table()
    if judge is not None:
        random.Random(args.seed).shuffle(answered)
        result["llm"] = await judge.score(answered[: args.questions])
    return result


def _day(at_ms: int | None) -> str:
    if at_ms is None:
        return "unknown date"
    return time.strftime("%d %B %Y", time.gmtime(at_ms / 1000))


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _prompts(args: argparse.Namespace) -> tuple[str, str]:
    """The answer and judge templates: the project's, or the files given, checked (PromptError)."""
    answer, judge = ANSWER_PROMPT, JUDGE_PROMPT
    if args.answer_prompt is not None:
        answer = load_prompt(args.answer_prompt, ANSWER_FIELDS, "--answer-prompt")
    if args.judge_prompt is not None:
        judge = load_prompt(args.judge_prompt, JUDGE_FIELDS, "--judge-prompt")
    return answer, judge


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help="locomo10.zip (or a folder of its json files)")
    parser.add_argument(
        "--extractor", nargs="+", default=["rules", "embeddings"], help="MEMCHAT_MEMORY_EXTRACTOR values"
    )
    parser.add_argument("--recall", default="ranked", help="MEMCHAT_MEMORY_RECALL (ranked: similarity to the question)")
    parser.add_argument("--injection-limit", type=int, default=None, help="k; default: memchat's default (10)")
    parser.add_argument("--conversations", type=int, default=10, help="the first N conversations")
    parser.add_argument("--llm-base-url", default=None, help="an OpenAI-compatible endpoint: answer and judge (J)")
    parser.add_argument("--model", default=None, help="the answering model (and the llm/hybrid extractors')")
    parser.add_argument("--judge-model", default=None, help="the judge; default: --model")
    parser.add_argument("--api-key", default="not-needed")
    parser.add_argument("--questions", type=int, default=200, help="J: a seeded sample of this many questions")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--answer-prompt", type=Path, default=None, help="J: the answer template ({memories}, {question})"
    )
    parser.add_argument(
        "--judge-prompt", type=Path, default=None, help="J: the judge template ({question}, {gold}, {answer})"
    )
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    args = parser.parse_args(argv)
    # every check before any import or model call
    if args.llm_base_url and not args.model:
        parser.error("--model is needed with --llm-base-url")
    if not args.llm_base_url and (args.answer_prompt or args.judge_prompt):
        parser.error("--answer-prompt and --judge-prompt are for J: give --llm-base-url (and --model) too")
    try:
        answer_prompt, judge_prompt = _prompts(args)
    except PromptError as e:
        parser.error(str(e))
    judge = None
    if args.llm_base_url:
        judge_model = args.judge_model or args.model
        judge = Judge(
            args.llm_base_url, args.model, judge_model, args.api_key, args.concurrency, answer_prompt, judge_prompt
        )
    conversations = load_locomo(args.data)[: args.conversations]
    report: dict[str, Any] = {
        "commit": _commit(),
        "conversations": len(conversations),
        "questions": sum(len(c.questions) for c in conversations),
        "recall": args.recall,
        "extractors": {},
    }
    if judge is not None:  # which templates J used: the project's, or a file's
        report["prompts"] = {
            "answer": str(args.answer_prompt or "default"),
            "judge": str(args.judge_prompt or "default"),
        }
    for extractor in args.extractor:
        report["extractors"][extractor] = asyncio.run(run_extractor(conversations, extractor, args, judge))
        print(json.dumps({extractor: report["extractors"][extractor]}, ensure_ascii=False, indent=1), flush=True)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
