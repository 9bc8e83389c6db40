"""J, computed as the mem0 paper does: an answer from the recalled memories, labelled CORRECT or WRONG by a judge.

The method is mem0's (answer from a list of dated memories, then an LLM judge that grades leniently
against the gold answer); the two prompts below are this project's own, written to ask for the same
things. Other prompt files can replace them (`--answer-prompt`, `--judge-prompt` of locomo.py, read by
`load_prompt`). The memories are memchat's top-k recall for the question, each with the date of the
message it came from.

A prompt is plain text with placeholders: `{memories}` and `{question}` in the answer prompt,
`{question}`, `{gold}` and `{answer}` in the judge prompt. `{{name}}` writes a literal `{name}`; any
other brace is literal as it stands (a JSON example needs no escaping).
"""

import asyncio
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.memory_eval.locomo_data import CATEGORIES, Question
from openai import AsyncOpenAI

ANSWER_FIELDS = ("memories", "question")
JUDGE_FIELDS = ("question", "gold", "answer")

ANSWER_PROMPT = """\
Below is what was remembered from a long chat between two people, one memory per line, each line
starting with the date on which it was said. Answer the question after them.

Rules:
- Base the answer on these memories alone: no outside knowledge, nothing they do not support.
- Times: a memory may place something relative to the day it was said ("yesterday", "last summer",
  "in two weeks"). Count from that memory's own date to the real date, month or year, and answer with
  that, never with the relative words.
- Conflicts: where memories disagree about the same thing, the latest-dated memory wins.
- Length: give only the answer, in a few words (six at most), with no explanation.

Memories:
{memories}

Question: {question}
Answer:"""

JUDGE_PROMPT = """\
You are checking answers in a test of long-term memory: each question is about something said in
earlier conversations. Compare the answer to grade with the reference answer and label it CORRECT or
WRONG.

Be lenient:
- The answer may be longer or worded differently from the reference. Label it CORRECT when it is
  about the same thing the reference names.
- For a question about when something happened, label it CORRECT when it points to the same date or
  period as the reference, whatever the format ("3 March 2022", "March 3rd" and "2022-03-03" are one
  day) and even when it is phrased relative to another time.
- Otherwise, label it WRONG.

Question: {question}
Reference answer: {gold}
Answer to grade: {answer}

Give your reason in one sentence, then end with the label as JSON: {"label": "CORRECT"} or
{"label": "WRONG"}. Use only one of the two labels in your reply."""

# `{{name}}` (a literal `{name}`) or `{name}` (a placeholder); nothing else in braces is special.
_PLACEHOLDER = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


class PromptError(ValueError):
    """A prompt template that cannot be used: unreadable, a placeholder missing or unknown."""


def _braced(names: list[str] | tuple[str, ...]) -> str:
    return ", ".join("{" + n + "}" for n in names)


def check_prompt(template: str, fields: tuple[str, ...], what: str) -> None:
    """PromptError unless `template` has every placeholder of `fields` and no other."""
    named = {m.group(2) for m in _PLACEHOLDER.finditer(template) if m.group(2)}
    missing = [f for f in fields if f not in named]
    unknown = sorted(named - set(fields))
    problems = []
    if missing:
        problems.append(f"missing {_braced(missing)}")
    if unknown:
        problems.append(f"unknown {_braced(unknown)}")
    if problems:
        raise PromptError(
            f"{what}: {'; '.join(problems)} (its placeholders are {_braced(fields)}, each needed;"
            " write {{name}} for a literal {name})"
        )


def load_prompt(path: Path, fields: tuple[str, ...], what: str) -> str:
    """The template in `path` (UTF-8), checked against `fields`; PromptError says what is wrong."""
    try:
        template = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise PromptError(f"{what} {path}: cannot read it ({reason})") from e
    check_prompt(template, fields, f"{what} {path}")
    return template


def render(template: str, **values: str) -> str:
    """The template with its placeholders filled; a value is inserted as it is (never read as a template)."""

    def fill(match: re.Match[str]) -> str:
        if match.group(1):
            return "{" + match.group(1) + "}"
        return values[match.group(2)]

    return _PLACEHOLDER.sub(fill, template)


def parse_label(raw: str) -> int:
    """1 for CORRECT, 0 otherwise; the last JSON object's label when there is one, else the last label named."""
    for match in reversed(re.findall(r"\{[^{}]*\}", raw)):
        try:
            parsed = json.loads(match)
        except json.JSONDecodeError:
            continue
        if isinstance(parsed, dict) and "label" in parsed:
            return int(str(parsed["label"]).strip().upper() == "CORRECT")
    labels = re.findall(r"CORRECT|WRONG", raw.upper())
    return int(bool(labels) and labels[-1] == "CORRECT")


class Judge:
    def __init__(
        self,
        base_url: str,
        model: str,
        judge_model: str,
        api_key: str,
        concurrency: int,
        answer_prompt: str = ANSWER_PROMPT,
        judge_prompt: str = JUDGE_PROMPT,
    ) -> None:
        check_prompt(answer_prompt, ANSWER_FIELDS, "the answer prompt")
        check_prompt(judge_prompt, JUDGE_FIELDS, "the judge prompt")
        self._client = AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=120, max_retries=2)
        self._model, self._judge_model = model, judge_model
        self._answer_prompt, self._judge_prompt = answer_prompt, judge_prompt
        self._limit = asyncio.Semaphore(concurrency)

    async def _ask(self, model: str, prompt: str) -> str:
        response = await self._client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": prompt}], temperature=0.0, max_tokens=512
        )
        return response.choices[0].message.content or ""

    async def _one(self, question: Question, memories: list[str]) -> dict[str, Any]:
        async with self._limit:  # `concurrency` questions at a time, each answered then judged
            return await self._answer_and_judge(question, memories)

    async def _answer_and_judge(self, question: Question, memories: list[str]) -> dict[str, Any]:
        prompt = render(self._answer_prompt, memories="\n".join(memories) or "(none)", question=question.question)
        answer = (await self._ask(self._model, prompt)).strip()
        judged = render(self._judge_prompt, question=question.question, gold=question.answer, answer=answer)
        verdict = await self._ask(self._judge_model, judged)
        return {"category": question.category, "answer": answer, "label": parse_label(verdict)}

    async def score(self, sample: list[tuple[Question, list[str]]]) -> dict[str, Any]:
        results = await asyncio.gather(*(self._one(q, memories) for q, memories in sample))
        by_category: dict[int, list[int]] = defaultdict(list)
        for r in results:
            by_category[r["category"]].append(r["label"])
        labels = [r["label"] for r in results]
        return {
            "questions": len(results),
            "J": round(100 * sum(labels) / len(labels), 1) if labels else 0.0,
            "by_category": {
                CATEGORIES[c]: round(100 * sum(v) / len(v), 1) for c, v in sorted(by_category.items()) if v
            },
            "model": self._model,
            "judge_model": self._judge_model,
        }
