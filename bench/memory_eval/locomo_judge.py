"""J, as the mem0 paper computes it: an answer from the recalled memories, labelled CORRECT or WRONG by a judge.

The two prompts are mem0's (github.com/mem0ai/mem0, evaluation/prompts.py ANSWER_PROMPT_ZEP, the
one-memory-list variant, and evaluation/metrics/llm_judge.py ACCURACY_PROMPT; Apache-2.0), kept
word for word; only the memories differ: memchat's top-k recall for the question, each with the
date of the message it came from.
"""

import asyncio
import json
import re
from collections import defaultdict
from typing import Any

from bench.memory_eval.locomo_data import CATEGORIES, Question
from openai import AsyncOpenAI

ANSWER_PROMPT = """
    You are an intelligent memory assistant tasked with retrieving accurate information from conversation memories.

    # CONTEXT:
    You have access to memories from a conversation. These memories contain
    timestamped information that may be relevant to answering the question.

    # INSTRUCTIONS:
    1. Carefully analyze all provided memories
    2. Pay special attention to the timestamps to determine the answer
    3. If the question asks about a specific event or fact, look for direct evidence in the memories
    4. If the memories contain contradictory information, prioritize the most recent memory
    5. If there is a question about time references (like "last year", "two months ago", etc.), 
       calculate the actual date based on the memory timestamp. For example, if a memory from 
       4 May 2022 mentions "went to India last year," then the trip occurred in 2021.
    6. Always convert relative time references to specific dates, months, or years. For example, 
       convert "last year" to "2022" or "two months ago" to "March 2023" based on the memory 
       timestamp. Ignore the reference while answering the question.
    7. Focus only on the content of the memories. Do not confuse character 
       names mentioned in memories with the actual users who created those memories.
    8. The answer should be less than 5-6 words.

    # APPROACH (Think step by step):
    1. First, examine all memories that contain information related to the question
    2. Examine the timestamps and content of these memories carefully
    3. Look for explicit mentions of dates, times, locations, or events that answer the question
    4. If the answer requires calculation (e.g., converting relative time references), show your work
    5. Formulate a precise, concise answer based solely on the evidence in the memories
    6. Double-check that your answer directly addresses the question asked
    7. Ensure your final answer is specific and avoids vague time references

    Memories:

    {memories}

    Question: {question}
    Answer:
    """  # noqa: W291

ACCURACY_PROMPT = """
Your task is to label an answer to a question as ’CORRECT’ or ’WRONG’. You will be given the following data:
    (1) a question (posed by one user to another user), 
    (2) a ’gold’ (ground truth) answer, 
    (3) a generated answer
which you will score as CORRECT/WRONG.

The point of the question is to ask about something one user should know about the other user based on their prior conversations.
The gold answer will usually be a concise and short answer that includes the referenced topic, for example:
Question: Do you remember what I got the last time I went to Hawaii?
Gold answer: A shell necklace
The generated answer might be much longer, but you should be generous with your grading - as long as it touches on the same topic as the gold answer, it should be counted as CORRECT. 

For time related questions, the gold answer will be a specific date, month, year, etc. The generated answer might be much longer or use relative time references (like "last Tuesday" or "next month"), but you should be generous with your grading - as long as it refers to the same date or time period as the gold answer, it should be counted as CORRECT. Even if the format differs (e.g., "May 7th" vs "7 May"), consider it CORRECT if it's the same date.

Now it's time for the real question:
Question: {question}
Gold answer: {gold_answer}
Generated answer: {generated_answer}

First, provide a short (one sentence) explanation of your reasoning, then finish with CORRECT or WRONG. 
Do NOT include both CORRECT and WRONG in your response, or it will break the evaluation script.

Just return the label CORRECT or WRONG in a json format with the key as "label".
"""  # noqa: W291, E501, RUF001


def parse_label(raw: str) -> int:
    """1 for CORRECT, 0 otherwise; the JSON's label when there is one, else the last label named."""
    match = re.search(r"\{[^{}]*\}", raw)
    if match:
        try:
            label = str(json.loads(match.group(0)).get("label", ""))
            return int(label.strip().upper() == "CORRECT")
        except (json.JSONDecodeError, AttributeError):
            pass
    labels = re.findall(r"CORRECT|WRONG", raw.upper())
    return int(bool(labels) and labels[-1] == "CORRECT")


class Judge:
    def __init__(self, base_url: str, model: str, judge_model: str, api_key: str, concurrency: int) -> None:
        self._client = AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=120, max_retries=2)
        self._model, self._judge_model = model, judge_model
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
        prompt = ANSWER_PROMPT.format(memories="\n".join(memories) or "(none)", question=question.question)
        answer = (await self._ask(self._model, prompt)).strip()
        verdict = await self._ask(
            self._judge_model,
            ACCURACY_PROMPT.format(question=question.question, gold_answer=question.answer, generated_answer=answer),
        )
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
