"""The turn's events as OpenAI's chat completion: one JSON body, or `chat.completion.chunk` events.

Streaming: a first chunk with the assistant role, a chunk per batch of text, a last chunk with the
finish reason, then (with `stream_options.include_usage`) a chunk with no choices and the usage,
then `data: [DONE]`. A reply that breaks after its first text ends with an `error` event (which the
`openai` SDK raises as an APIError) and no [DONE].

Usage is estimated, not counted by a tokenizer (estimate_tokens); prompt_tokens covers the new
message only: the history, summary and memories the server adds are not visible here.
"""

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.responses import JSONResponse, Response

from memchat.chat.encoders import StreamBody
from memchat.chat.events import EventBatches, ReasoningDelta, TextDelta, TurnFailed, TurnFinished, TurnStarted
from memchat.clock import now_ms
from memchat.openai_compat.errors import openai_error, openai_error_body
from memchat.openai_compat.schemas import AssistantMessage, ChatCompletion, Choice, Usage

MEDIA_TYPE = "text/event-stream"
DONE = b"data: [DONE]\n\n"
FINISH_REASONS = {"completed": "stop", "incomplete": "length", "stopped": "stop"}


def estimate_tokens(text: str) -> int:
    """About one token per CJK character and per four other characters (cl100k-like on average)."""
    wide = sum(1 for ch in text if ord(ch) >= 0x2E80)
    return wide + (len(text) - wide + 3) // 4


def _sse(payload: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(payload) + b"\n\n"


@dataclass(frozen=True)
class OpenAIEncoder:
    """One request's encoder: the model name it answers as, streamed or not, usage asked for."""

    wire = "openai"  # its label in the metrics (a class attribute, not a field)
    model: str
    input_text: str
    stream_body: bool
    include_usage: bool = False

    async def stream(self, started: TurnStarted, batches: EventBatches) -> Response:
        if self.stream_body:
            return StreamBody(self._chunks(started.reply_id, batches), MEDIA_TYPE)
        return await self._collected(started.reply_id, batches)

    def usage(self, reply: str) -> Usage:
        prompt, completion = estimate_tokens(self.input_text), estimate_tokens(reply)
        return Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)

    async def _collected(self, reply_id: str, batches: EventBatches) -> Response:
        parts: list[str] = []
        thinking: list[str] = []
        async for batch in batches:
            for event in batch:
                if isinstance(event, TextDelta):
                    parts.append(event.text)
                elif isinstance(event, ReasoningDelta):
                    thinking.append(event.text)
                elif isinstance(event, TurnFailed):
                    return openai_error(event.http_status, event.message, code=event.code)
                elif isinstance(event, TurnFinished):
                    if event.error is not None:
                        return openai_error(502, event.error.message, code="upstream_error")
                    finish = FINISH_REASONS.get(event.status, "stop")
                    return self._completion(reply_id, "".join(parts), finish, "".join(thinking))
        return self._completion(reply_id, "".join(parts), "stop", "".join(thinking))

    async def _chunks(self, reply_id: str, batches: EventBatches) -> AsyncIterator[bytes]:
        yield self._chunk(reply_id, {"role": "assistant", "content": ""})
        parts: list[str] = []
        async for batch in batches:
            thinking = "".join(event.text for event in batch if isinstance(event, ReasoningDelta))
            if thinking:
                yield self._chunk(reply_id, {"reasoning_content": thinking})
            text = "".join(event.text for event in batch if isinstance(event, TextDelta))
            if text:
                parts.append(text)
                yield self._chunk(reply_id, {"content": text})
            for event in batch:
                if isinstance(event, TurnFailed):
                    yield _sse(openai_error_body(event.http_status, event.message, code=event.code))
                    return
                if isinstance(event, TurnFinished):
                    if event.error is not None:
                        yield _sse(openai_error_body(502, event.error.message, code="upstream_error"))
                        return
                    for tail in self._finish(reply_id, FINISH_REASONS.get(event.status, "stop"), "".join(parts)):
                        yield tail
                    return

    def _finish(self, reply_id: str, finish_reason: str, reply: str) -> list[bytes]:
        tail = [self._chunk(reply_id, {}, finish_reason)]
        if self.include_usage:
            tail.append(self._frame(reply_id, [], self.usage(reply).model_dump()))
        tail.append(DONE)
        return tail

    def _chunk(self, reply_id: str, delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return self._frame(reply_id, [choice], None)

    def _frame(self, reply_id: str, choices: list[dict[str, Any]], usage: dict[str, int] | None) -> bytes:
        payload: dict[str, Any] = {
            "id": f"chatcmpl-{reply_id}",
            "object": "chat.completion.chunk",
            "created": now_ms() // 1000,
            "model": self.model,
            "system_fingerprint": None,
            "choices": choices,
        }
        if self.include_usage:
            payload["usage"] = usage  # null on every chunk but the last, as OpenAI sends it
        return _sse(payload)

    def _completion(self, reply_id: str, text: str, finish_reason: str, reasoning: str = "") -> JSONResponse:
        message = AssistantMessage(content=text, reasoning_content=reasoning or None)
        completion = ChatCompletion(
            id=f"chatcmpl-{reply_id}",
            created=now_ms() // 1000,
            model=self.model,
            choices=[Choice(message=message, finish_reason=finish_reason)],
            usage=self.usage(text),
        )
        body = completion.model_dump()
        if not reasoning:
            del body["choices"][0]["message"]["reasoning_content"]
        return JSONResponse(body)
