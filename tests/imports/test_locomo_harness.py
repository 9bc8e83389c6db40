"""The LoCoMo harness (bench/memory_eval/locomo.py) on a tiny conversation of the same shape: it imports
through the API, scores recall@k from the memories' source messages, and computes J through a real
OpenAI-compatible server (the test upstream) with the project's prompts or prompt files given on the command line."""

import argparse
import json
import re
from pathlib import Path

import pytest
from bench.memory_eval.locomo import main, run_extractor
from bench.memory_eval.locomo_data import load_locomo, session_time_ms
from bench.memory_eval.locomo_judge import (
    ANSWER_FIELDS,
    ANSWER_PROMPT,
    JUDGE_FIELDS,
    JUDGE_PROMPT,
    Judge,
    PromptError,
    check_prompt,
    parse_label,
    render,
)

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
    assert any("Reference answer: 杭州" in j for j in judged)


def test_judge_labels() -> None:
    assert parse_label('The answer names the city. {"label": "CORRECT"}') == 1
    assert parse_label('{"label": "WRONG"}') == 0
    assert parse_label("It is a different date, so WRONG") == 0
    assert parse_label('```json\n{"label": "CORRECT"}\n```') == 1
    assert parse_label("no label at all") == 0
    assert parse_label('Not the same trip {"why": "another year"}. {"label": "WRONG"}') == 0
    assert parse_label('{"label": "correct"}') == 1


def test_default_prompts_fill_every_placeholder_and_ask_what_the_method_needs() -> None:
    answer = render(ANSWER_PROMPT, memories="08 May 2023: 我住在杭州", question="林晓住在哪里？")
    assert "Memories:\n08 May 2023: 我住在杭州\n" in answer
    assert "Question: 林晓住在哪里？" in answer
    judged = render(JUDGE_PROMPT, question="林晓住在哪里？", gold="杭州", answer="在杭州")
    assert "Question: 林晓住在哪里？\nReference answer: 杭州\nAnswer to grade: 在杭州" in judged
    for text in (answer, judged):  # nothing left to fill
        assert not re.search(r"\{(memories|question|gold|answer)\}", text)
    # answer: from the memories alone, relative times from each memory's date, the latest wins, a few words
    assert "these memories alone" in answer
    assert "memory's own date" in answer
    assert "latest-dated memory wins" in answer
    assert "a few words" in answer
    # judge: CORRECT or WRONG, leniently (same thing, same date in any format), JSON the parser reads
    assert "label it CORRECT or\nWRONG" in judged
    assert "lenient" in judged
    assert "same thing the reference names" in judged
    assert "same date" in judged
    assert "whatever the format" in judged
    assert '{"label": "CORRECT"}' in judged  # a literal brace stays as written
    assert parse_label('Same city. {"label": "CORRECT"}') == 1


def test_render_inserts_values_verbatim_and_keeps_other_braces() -> None:
    template = 'Say {{question}} as {"k": 1}; {memories} / {question}'
    assert (
        render(template, memories="{question} {{x}}", question="Q")
        == 'Say {question} as {"k": 1}; {question} {{x}} / Q'
    )
    check_prompt(template, ANSWER_FIELDS, "t")
    with pytest.raises(PromptError, match=r"missing \{question\}"):
        check_prompt("{{question}} {memories}", ANSWER_FIELDS, "t")  # an escaped name is not a placeholder


def _sample(tmp_path: Path) -> Path:
    data = tmp_path / "locomo"
    data.mkdir()
    (data / "1.json").write_text(json.dumps(SAMPLE, ensure_ascii=False), encoding="utf-8")
    return data


def _cli(data: Path, upstream: TestUpstream, *extra: str) -> list[str]:
    return [
        *(str(data), "--extractor", "rules", "--recall", "v1", "--concurrency", "1"),
        *("--llm-base-url", upstream.base_url, "--model", "answer-model", "--judge-model", "judge-model"),
        *extra,
    ]


def test_prompt_files_are_the_prompts_sent(tmp_path: Path, upstream: TestUpstream) -> None:
    answer_file, judge_file = tmp_path / "answer.txt", tmp_path / "judge.txt"
    answer_file.write_text(
        "Literal {{memories}} and {{x}} {not a placeholder}.\nM: {memories}\nQ: {question}\n", encoding="utf-8"
    )
    judge_file.write_text('Q={question} G={gold} A={answer} -> {"label": ...}', encoding="utf-8")
    upstream.script(Reply(text="杭州"), Reply(text='{"label": "CORRECT"}'), Reply(text="北京"), Reply(text="WRONG"))
    out = tmp_path / "out.json"
    argv = _cli(_sample(tmp_path), upstream, "--answer-prompt", str(answer_file), "--judge-prompt", str(judge_file))
    main([*argv, "--out", str(out)])
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["prompts"] == {"answer": str(answer_file), "judge": str(judge_file)}
    assert report["extractors"]["rules"]["llm"]["J"] == 50.0
    sent = [(r["model"], r["messages"][0]["content"]) for r in upstream.chat_requests]
    literal, memory = "Literal {memories} and {x} {not a placeholder}.", "08 May 2023: 我住在杭州，我喜欢爬山。"
    assert sent == [  # one question at a time (--concurrency 1), answered then judged, in the seeded order
        ("answer-model", f"{literal}\nM: {memory}\nQ: 林晓住在哪里？\n"),
        ("judge-model", 'Q=林晓住在哪里？ G=杭州 A=杭州 -> {"label": ...}'),
        ("answer-model", f"{literal}\nM: {memory}\nQ: 小周下个月去哪里？\n"),
        ("judge-model", 'Q=小周下个月去哪里？ G=成都 A=北京 -> {"label": ...}'),
    ]


def test_default_prompts_without_prompt_files(tmp_path: Path, upstream: TestUpstream) -> None:
    out = tmp_path / "out.json"
    main([*_cli(_sample(tmp_path), upstream), "--out", str(out)])
    assert json.loads(out.read_text(encoding="utf-8"))["prompts"] == {"answer": "default", "judge": "default"}
    sent = [r["messages"][0]["content"] for r in upstream.chat_requests]
    assert sent[0] == render(ANSWER_PROMPT, memories="08 May 2023: 我住在杭州，我喜欢爬山。", question="林晓住在哪里？")
    assert sent[1].startswith(JUDGE_PROMPT.split("{question}")[0])


@pytest.mark.parametrize(
    ("option", "text", "problem"),
    [
        ("--answer-prompt", "Memories: {memories}\nAnswer:", "missing {question}"),
        ("--answer-prompt", "{memories} {question} {{gold}} {gold}", "unknown {gold}"),
        ("--judge-prompt", "{question} {gold}", "missing {answer}"),
        ("--judge-prompt", "{question} {gold} {answer} {generated_answer}", "unknown {generated_answer}"),
        ("--judge-prompt", None, "cannot read"),
    ],
)
def test_a_bad_prompt_file_stops_the_run_before_any_import_or_model_call(
    tmp_path: Path,
    upstream: TestUpstream,
    capsys: pytest.CaptureFixture[str],
    option: str,
    text: str | None,
    problem: str,
) -> None:
    prompt = tmp_path / "prompt.txt"
    if text is not None:
        prompt.write_text(text, encoding="utf-8")
    out = tmp_path / "out.json"
    with pytest.raises(SystemExit) as exited:
        main([*_cli(_sample(tmp_path), upstream), option, str(prompt), "--out", str(out)])
    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert f"error: {option} {prompt}" in error
    assert problem in error
    assert upstream.requests == []  # the test LLM server was never asked
    assert not out.exists()


def test_prompt_files_need_an_llm(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("{memories} {question}", encoding="utf-8")
    with pytest.raises(SystemExit) as exited:
        main([str(_sample(tmp_path)), "--extractor", "rules", "--answer-prompt", str(prompt)])
    assert exited.value.code == 2
    assert "give --llm-base-url" in capsys.readouterr().err


def test_the_judge_refuses_a_template_without_its_placeholders(upstream: TestUpstream) -> None:
    with pytest.raises(PromptError, match=r"the judge prompt: missing \{gold\}, \{answer\}"):
        Judge(upstream.base_url, "m", "m", "key", 1, judge_prompt="{question}")
    check_prompt(ANSWER_PROMPT, ANSWER_FIELDS, "answer")
    check_prompt(JUDGE_PROMPT, JUDGE_FIELDS, "judge")
