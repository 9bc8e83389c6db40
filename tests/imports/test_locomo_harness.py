"""The LoCoMo harness (bench/memory_eval/locomo.py) on a tiny conversation of the same shape: it imports
through the API, scores recall@k from the memories' source messages, and computes J through a real
OpenAI-compatible server (the test upstream) with mem0's prompts."""

import argparse
import json
from pathlib import Path

from bench.memory_eval.locomo import run_extractor
from bench.memory_eval.locomo_data import load_locomo, session_time_ms
from bench.memory_eval.locomo_judge import Judge, parse_label

from tests.upstream import Reply, TestUpstream

SAMPLE = {
    "speaker_a": "林晓",
    "speaker_b": "小周",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "林晓", "dia_id": "D1:1", "text": "我住在杭州，我喜欢爬山。"},
        {"speaker": "小周", "dia_id": "D1:2", "text": "我下个月去成都出差。"},
    ],
    "session_2_date_time": "10:00 am on 9 June, 2023",
    "session_2": [
        {"speaker": "林晓", "dia_id": "D2:1", "text": "今天天气不错"},
        {"speaker": "小周", "dia_id": "D2:2", "text": "是啊", "blip_caption": "a photo of a park"},
    ],
    "qa": [
        {"question": "林晓住在哪里？", "answer": "杭州", "evidence": ["D1:1"], "category": 4},
        {"question": "小周下个月去哪里？", "answer": "成都", "evidence": ["D1:2"], "category": 1},
        {"question": "小周养猫吗？", "adversarial_answer": "养", "evidence": ["D1:2"], "category": 5},
    ],
}


def _args(**extra: object) -> argparse.Namespace:
    values: dict[str, object] = {
        "recall": "v1",
        "injection_limit": None,
        "llm_base_url": None,
        "model": None,
        "questions": 10,
        "seed": 7,
    }
    return argparse.Namespace(**{**values, **extra})


def test_sessions_become_timed_messages_speaker_a_the_user(tmp_path: Path) -> None:
    (tmp_path / "1.json").write_text(json.dumps(SAMPLE, ensure_ascii=False), encoding="utf-8")
    [conversation] = load_locomo(tmp_path)
    assert [m["role"] for m in conversation.messages] == ["user", "assistant", "user", "assistant"]
    assert conversation.dia_ids == ["D1:1", "D1:2", "D2:1", "D2:2"]
    start = session_time_ms("1:56 pm on 8 May, 2023")
    assert start == 1_683_554_160_000
    assert [m["timestamp"] for m in conversation.messages[:2]] == [start, start + 30_000]
    assert conversation.messages[3]["content"] == "是啊 [shares a photo: a photo of a park]"
    assert [q.category for q in conversation.questions] == [4, 1]  # adversarial left out


async def test_recall_at_k_counts_evidence_said_by_the_user(tmp_path: Path) -> None:
    (tmp_path / "1.json").write_text(json.dumps(SAMPLE, ensure_ascii=False), encoding="utf-8")
    result = await run_extractor(load_locomo(tmp_path), "rules", _args(), None)
    rows = result["categories"]
    assert result["memories"] == 1  # the v1 rules: 我住在杭州，我喜欢爬山。
    assert rows["single-hop"] == {
        "questions": 1,
        "recall_at_k": 1.0,
        "evidence_in_any_memory": 1.0,
        "user_evidence": 1.0,
    }
    # said by speaker B: no memory of memchat's can come from it
    assert rows["multi-hop"]["recall_at_k"] == 0.0
    assert rows["multi-hop"]["user_evidence"] == 0.0
    assert rows["all"]["recall_at_k"] == 0.5


async def test_j_from_answers_and_judge_labels(tmp_path: Path, upstream: TestUpstream) -> None:
    (tmp_path / "1.json").write_text(json.dumps(SAMPLE, ensure_ascii=False), encoding="utf-8")
    judge = Judge(upstream.base_url, "answer-model", "judge-model", "key", concurrency=1)
    upstream.script(Reply(text="杭州"), Reply(text='{"label": "CORRECT"}'), Reply(text="不知道"), Reply(text="WRONG"))
    result = await run_extractor(load_locomo(tmp_path), "rules", _args(llm_base_url=upstream.base_url), judge)
    assert result["llm"]["questions"] == 2
    assert result["llm"]["J"] == 50.0
    requests = upstream.chat_requests
    assert [r["model"] for r in requests] == ["answer-model", "judge-model", "answer-model", "judge-model"]
    answers = [r["messages"][0]["content"] for r in requests if r["model"] == "answer-model"]
    assert any("08 May 2023: 我住在杭州，我喜欢爬山。" in a for a in answers)
    judged = [r["messages"][0]["content"] for r in requests if r["model"] == "judge-model"]
    assert any("Gold answer: 杭州" in j for j in judged)


def test_judge_labels() -> None:
    assert parse_label('The answer names the city. {"label": "CORRECT"}') == 1
    assert parse_label('{"label": "WRONG"}') == 0
    assert parse_label("It is a different date, so WRONG") == 0
    assert parse_label('```json\n{"label": "CORRECT"}\n```') == 1
    assert parse_label("no label at all") == 0
