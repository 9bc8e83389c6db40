"""The recall benchmark: does the prompt memchat builds still hold the fact a question needs?

A real memchat (uvicorn on loopback, a fresh SQLite file) talks to a scripted OpenAI-compatible
upstream on loopback (upstream.py). For each dialog of dialogs.jsonl a new user and agent send every
user turn through POST /api/chat, the upstream answering with the turn's scripted reply, and the
app's background work (memory extraction, summary) is drained after each turn; then the question
is sent and the system messages the upstream received for it are scored: a hit when every `expect`
group has an alternative in them (case-insensitive substring) and no `stale` string is there.

    .venv/bin/python -m bench.memory_eval.recall.run [--dialogs FILE] [--set KEY=VALUE ...]
        [--profile NAME] [--label LABEL] [--out FILE] [--concurrency N]

`--set` takes memchat's flat setting names (memory_extractor=embeddings, memory_recall=ranked,
summary_strategy=digest, ...); `--profile` sets MEMCHAT_PROFILE. README.md says how the set was made.
"""

import argparse
import asyncio
import json
import os
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from bench.memory_eval.locomo import serve_memchat
from bench.memory_eval.recall.upstream import ScriptedUpstream, handle_of

from memchat.app import AppState
from memchat.settings import Settings

HERE = Path(__file__).parent
DIALOGS = HERE / "dialogs.jsonl"
RESULTS = HERE.parent / "results"
KINDS = ("fact", "change", "preference", "boundary", "event")
LANGS = ("zh", "en")
QUESTION_REPLY = {"zh": "好的，我想想。这就给你建议。", "en": "Sure, let me think. Here is what I'd suggest."}
RECENT_TURNS = 10  # the last 20 messages of history the prompt carries


@dataclass
class Dialog:
    id: str
    lang: str
    kind: str
    turns: list[dict[str, str]]
    question: str
    expect: list[list[str]]
    stale: list[str] = field(default_factory=list)
    key_turns: list[int] = field(default_factory=list)


def load_dialogs(path: Path) -> list[Dialog]:
    dialogs = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            try:
                dialogs.append(Dialog(**row))
            except TypeError as exc:
                raise ValueError(f"{path}:{number}: {exc}") from exc
    return dialogs


def problems(dialog: Dialog) -> list[str]:
    """What breaks the set's rules (README.md): lengths, distances, where expect and stale words are."""
    found = []
    n = len(dialog.turns)
    if dialog.kind not in KINDS or dialog.lang not in LANGS:
        found.append("kind or lang")
    if not 16 <= n <= 30:
        found.append(f"{n} turns")
    if not dialog.key_turns or n - dialog.key_turns[0] < 13:
        found.append("key turn too recent")
    if dialog.kind == "change" and (len(dialog.key_turns) < 2 or n - dialog.key_turns[-1] < 11 or not dialog.stale):
        found.append("change turn too recent, or no stale value")
    others = [t for i, t in enumerate(dialog.turns) if i not in dialog.key_turns]
    for group in dialog.expect:
        for alt in group:
            if any(alt.lower() in (t["user"] + t["assistant"]).lower() for t in others):
                found.append(f"{alt!r} outside the key turns")
            if alt.lower() in dialog.question.lower():
                found.append(f"{alt!r} in the question")
    recent = dialog.turns[-RECENT_TURNS:]
    for word in dialog.stale:
        if any(word.lower() in (t["user"] + t["assistant"]).lower() for t in recent) or word in dialog.question:
            found.append(f"stale {word!r} in the last {RECENT_TURNS} turns or the question")
    return found


def score(system: str, expect: list[list[str]], stale: list[str]) -> dict[str, Any]:
    text = system.lower()
    missing = [group for group in expect if not any(alt.lower() in text for alt in group)]
    stale_found = [word for word in stale if word.lower() in text]
    return {"hit": not missing and not stale_found, "missing": missing, "stale_found": stale_found}


def chat_body(dialog: Dialog, agent_id: str, text: str) -> dict[str, Any]:
    message = {"id": f"m-{uuid.uuid4().hex[:12]}", "role": "user", "parts": [{"type": "text", "text": text}]}
    return {"id": f"recall-{dialog.id}", "trigger": "submit-message", "messages": [message], "agentId": agent_id}


class Session:
    """One dialog's user and agent; step i sends turn i, the step after the last turn the question."""

    def __init__(self, dialog: Dialog, client: httpx.AsyncClient, upstream: ScriptedUpstream):
        self.dialog = dialog
        self.client = client
        self.upstream = upstream
        self.headers: dict[str, str] = {}
        self.agent_id = ""
        self.errors: list[str] = []

    async def open(self) -> None:
        email = f"recall-{self.dialog.id}-{uuid.uuid4().hex[:6]}@example.com"
        signup = await self.client.post("/api/auth/signup", json={"email": email, "password": "recall bench 1"})
        signup.raise_for_status()
        self.headers = {"Authorization": f"Bearer {signup.json()['token']}"}
        name = "小安" if self.dialog.lang == "zh" else "Sam"
        agent = await self.client.post(
            "/api/agents", json={"name": name, "handle": handle_of(self.dialog.id)}, headers=self.headers
        )
        agent.raise_for_status()
        self.agent_id = agent.json()["id"]

    async def step(self, index: int) -> None:
        turns = self.dialog.turns
        if index > len(turns):
            return
        if index == len(turns):
            text, reply = self.dialog.question, QUESTION_REPLY[self.dialog.lang]
        else:
            text, reply = turns[index]["user"], turns[index]["assistant"]
        self.upstream.script(self.dialog.id, reply)
        body = chat_body(self.dialog, self.agent_id, text)
        response = await self.client.post("/api/chat", json=body, headers=self.headers)
        if response.status_code != 200 or response.text != reply:
            self.errors.append(f"turn {index}: {response.status_code} {response.text[:200]!r}")

    async def result(self) -> dict[str, Any]:
        request = self.upstream.last.get(self.dialog.id, {})
        messages = request.get("messages", [])
        system = "\n".join(m["content"] for m in messages if m.get("role") == "system")
        asked = bool(messages) and messages[-1].get("content") == self.dialog.question
        listed = await self.client.get(f"/api/agents/{self.agent_id}/memories", headers=self.headers)
        memories = len(listed.json().get("memories", [])) if listed.status_code == 200 else None
        row: dict[str, Any] = {"id": self.dialog.id, "lang": self.dialog.lang, "kind": self.dialog.kind}
        row.update(score(system, self.dialog.expect, self.dialog.stale))
        if not asked:
            self.errors.append("the question's request was not received")
            row["hit"] = False
        row.update(stale_free=not row["stale_found"], memories=memories, errors=self.errors, system=system)
        return row


async def settle(state: AppState) -> None:
    """Every turn's background work (save, extraction, summary) has run."""
    while len(state.background):
        await state.background.drain()


def _batches(dialogs: list[Dialog], size: int) -> Iterator[list[Dialog]]:
    for start in range(0, len(dialogs), size):
        yield dialogs[start : start + size]


async def run(dialogs: list[Dialog], overrides: dict[str, Any], concurrency: int = 8) -> list[dict[str, Any]]:
    """Every dialog through a fresh memchat; `concurrency` dialogs side by side, in step, the
    background work drained between steps (the app's own drain, as the tests settle a turn)."""
    upstream = await ScriptedUpstream().start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            flat: dict[str, Any] = {
                "database_url": f"sqlite+aiosqlite:///{tmp}/recall.db",
                "data_dir": Path(tmp) / "data",
                "llm_base_url": upstream.base_url,
                "llm_model": "recall-mock",
                "llm_max_retries": 0,
                "jwt_secret": "recall-bench-secret-0123456789abcdef",
                "chat_rate_limit_per_minute": 0,
                # a loaded machine must not turn similarity off (the turn's 1 s bound is for live chat)
                "memory_recall_timeout_s": 60.0,
                "web_dist_dir": Path(tmp) / "no-console",
                "gc_freeze_on_start": False,
                **overrides,
            }
            settings = Settings(_env_file=None, **flat)
            server, task, base_url, state = await serve_memchat(settings)
            try:
                rows = []
                async with httpx.AsyncClient(base_url=base_url, timeout=600) as client:
                    for batch in _batches(dialogs, concurrency):
                        sessions = [Session(d, client, upstream) for d in batch]
                        await asyncio.gather(*(s.open() for s in sessions))
                        for index in range(max(len(d.turns) for d in batch) + 1):
                            await asyncio.gather(*(s.step(index) for s in sessions))
                            await settle(state)
                        rows += [await s.result() for s in sessions]
                return rows
            finally:
                server.should_exit = True
                await task
    finally:
        await upstream.stop()


def _rate(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    good = sum(1 for r in rows if r[key])
    return {"n": len(rows), "hits": good, "rate": round(good / len(rows), 3) if rows else None}


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for lang in (*LANGS, "all"):
        mine = [r for r in rows if lang == "all" or r["lang"] == lang]
        table[lang] = {kind: _rate([r for r in mine if r["kind"] == kind], "hit") for kind in KINDS}
        table[lang]["all"] = _rate(mine, "hit")
        table[lang]["stale_free"] = _rate([r for r in mine if r["kind"] == "change"], "stale_free")
    return table


def markdown(table: dict[str, Any]) -> str:
    def cell(value: dict[str, Any]) -> str:
        return "-" if not value["n"] else f"{value['rate']:.2f} ({value['hits']}/{value['n']})"

    columns = (*KINDS, "all", "stale_free")
    lines = ["| | " + " | ".join(c.replace("_", "-") for c in columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for lang, row in table.items():
        lines.append(f"| {lang} | " + " | ".join(cell(row[c]) for c in columns) + " |")
    return "\n".join(lines)


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
        changed = subprocess.run(["git", "status", "--porcelain", "src"], capture_output=True, text=True, check=True)
        return out.stdout.strip() + ("+uncommitted-src" if changed.stdout.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _overrides(pairs: list[str], parser: argparse.ArgumentParser) -> dict[str, str]:
    values = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            parser.error(f"--set wants KEY=VALUE, not {pair!r}")
        values[key.strip()] = value.strip()
    try:
        Settings._route(values)
    except TypeError as exc:
        parser.error(str(exc))
    return values


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dialogs", type=Path, default=DIALOGS)
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--profile", default=None, help="MEMCHAT_PROFILE for the app under test")
    parser.add_argument("--label", default=None, help="names the result file; default: from the settings")
    parser.add_argument("--out", type=Path, default=None, help="default: bench/memory_eval/results/recall-LABEL.json")
    parser.add_argument("--concurrency", type=int, default=8, help="dialogs side by side")
    args = parser.parse_args(argv)
    overrides = _overrides(args.sets, parser)
    if args.profile:
        os.environ["MEMCHAT_PROFILE"] = args.profile
    label = args.label or "-".join([args.profile or "default", *(v for v in overrides.values())])
    dialogs = load_dialogs(args.dialogs)
    started = time.monotonic()
    rows = asyncio.run(run(dialogs, overrides, args.concurrency))
    table = summarize(rows)
    settings = Settings(_env_file=None, **overrides)
    report = {
        "label": label,
        "commit": _commit(),
        "dialogs": str(args.dialogs),
        "profile": args.profile,
        "overrides": overrides,
        "memory_extractor": settings.memory.extractor,
        "memory_recall": settings.memory.recall,
        "summary_strategy": settings.summary.strategy,
        "seconds": round(time.monotonic() - started, 1),
        "table": table,
        "rows": rows,
    }
    out = args.out or RESULTS / f"recall-{label}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    errors = [f"{r['id']}: {e}" for r in rows for e in r["errors"]]
    print(f"recall benchmark, {label} ({report['commit']}), {len(rows)} dialogs, {report['seconds']} s -> {out}")
    print(markdown(table))
    for line in errors[:20]:
        print("error:", line)


if __name__ == "__main__":
    main()
