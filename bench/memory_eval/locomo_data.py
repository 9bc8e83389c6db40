"""LoCoMo (snap-research/locomo, ACL 2024) read from the zip given on the command line, never the network.

Each conversation becomes an import body for memchat (speaker A as the user, speaker B as the
agent, each session's date-time as its messages' timestamps, 30 s apart) and its questions.
"""

import json
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# LoCoMo's categories (category 5, adversarial, is left out of published scores, as here)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_TURN_GAP_MS = 30_000


@dataclass(frozen=True)
class Question:
    conversation: str
    question: str
    answer: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True)
class Conversation:
    name: str
    speaker_a: str
    speaker_b: str
    messages: list[dict[str, Any]]  # the import body's messages
    dia_ids: list[str]  # dia_id of each message, in order
    speakers: list[str]
    questions: list[Question]


def session_time_ms(text: str) -> int:
    """'1:56 pm on 8 May, 2023' -> epoch ms (UTC)."""
    parsed = datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    return int(parsed.replace(tzinfo=UTC).timestamp() * 1000)


def _turn_text(turn: dict[str, Any]) -> str:
    text = str(turn.get("text", "")).strip()
    caption = turn.get("blip_caption")
    if caption:  # the image a speaker shared, as the LoCoMo paper's text-only baselines see it
        text = f"{text} [shares a photo: {caption}]".strip()
    return text


def parse_conversation(name: str, data: dict[str, Any]) -> Conversation:
    a, b = data["speaker_a"], data["speaker_b"]
    messages: list[dict[str, Any]] = []
    dia_ids: list[str] = []
    speakers: list[str] = []
    k = 1
    while f"session_{k}" in data:
        start = session_time_ms(data[f"session_{k}_date_time"])
        for i, turn in enumerate(data[f"session_{k}"]):
            text = _turn_text(turn)
            if not text:
                continue
            role = "user" if turn["speaker"] == a else "assistant"
            messages.append({"role": role, "content": text, "timestamp": start + i * _TURN_GAP_MS})
            dia_ids.append(str(turn["dia_id"]))
            speakers.append(str(turn["speaker"]))
        k += 1
    questions = [
        Question(
            name, str(q["question"]), str(q.get("answer", "")), tuple(map(str, q.get("evidence", []))), q["category"]
        )
        for q in data["qa"]
        if q.get("category") in CATEGORIES
    ]
    return Conversation(name, a, b, messages, dia_ids, speakers, questions)


def load_locomo(path: Path) -> list[Conversation]:
    """The conversations of locomo10.zip (or of a folder of its json files), by name."""
    found: list[tuple[str, dict[str, Any]]] = []
    if path.is_dir():
        for file in sorted(path.glob("*.json")):
            found.append((file.stem, json.loads(file.read_text(encoding="utf-8"))))
    else:
        with zipfile.ZipFile(path) as archive:
            for entry in sorted(archive.namelist()):
                if entry.endswith(".json"):
                    found.append((Path(entry).stem, json.loads(archive.read(entry))))
    return [parse_conversation(name, data) for name, data in found]
