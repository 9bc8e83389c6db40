"""The AI SDK's UI message stream (`DefaultChatTransport`, ai@5 and later): SSE `data: {json}` parts.

A turn's parts, in order:
- `start`: messageId = the id the reply is stored under (the history endpoint shows the same),
  messageMetadata = {userMessageId, conversationId};
- with a reasoning model: `reasoning-start`, `reasoning-delta`..., `reasoning-end` (its thinking,
  before the text; useChat shows it as a reasoning part);
- `text-start`, `text-delta`..., `text-end`;
- `data-memory` (transient): each memory the turn's inline extraction added,
  data = {action, memory: {id, type, content, importance}};
- `data-conversation` (transient): data = {conversationId, summary, messageCount} once stored;
- `data-error` (transient, {code, message}: the code as in the JSON errors), then `error`, when the
  upstream failed (before its first text: the only parts; after some text: before `finish`, the
  reply stored incomplete) or the reply could not be stored;
- `finish` with finishReason (stop; length for a reply cut short; other for a stopped one) and
  messageMetadata {status} (the stored reply's status), then `data: [DONE]`.

Every part carries exactly the keys of ai@7's part schemas, no others.
"""

from collections.abc import AsyncIterator
from typing import Any

import orjson
from starlette.responses import Response

from memchat.chat.encoders import STREAM_HEADERS, StreamBody
from memchat.chat.events import (
    EventBatches,
    MemorySaved,
    ReasoningDelta,
    TextDelta,
    TurnFailed,
    TurnFinished,
    TurnStarted,
)

UI_STREAM_HEADERS = {**STREAM_HEADERS, "x-vercel-ai-ui-message-stream": "v1"}
MEDIA_TYPE = "text/event-stream"
_TEXT_PART = "text-0"
_FINISH_REASONS = {"completed": "stop", "incomplete": "length", "stopped": "other"}


def sse(part: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(part) + b"\n\n"


DONE = b"data: [DONE]\n\n"


def start_part(reply_id: str, user_message_id: str | None, conversation_id: str | None) -> bytes:
    return sse(
        {
            "type": "start",
            "messageId": reply_id,
            "messageMetadata": {"userMessageId": user_message_id, "conversationId": conversation_id},
        }
    )


def error_parts(code: str, message: str) -> bytes:
    """A transient `data-error` {code, message} (for a client that shows its own words per code),
    then the `error` part every client understands."""
    data = {"type": "data-error", "data": {"code": code, "message": message}, "transient": True}
    return sse(data) + sse({"type": "error", "errorText": message})


def finish_part(status: str) -> bytes:
    return sse(
        {"type": "finish", "finishReason": _FINISH_REASONS.get(status, "other"), "messageMetadata": {"status": status}}
    )


async def ui_chunks(started: TurnStarted, batches: EventBatches) -> AsyncIterator[bytes]:
    yield start_part(started.reply_id, started.user_message_id, started.conversation_id)
    text_open = False
    reasoning: str | None = None  # the id of the reasoning part open now
    reasoning_parts = 0
    async for batch in batches:
        out: list[bytes] = []
        for event in batch:
            if isinstance(event, ReasoningDelta):
                if text_open:  # thinking again after some text: a new reasoning part after it
                    out.append(sse({"type": "text-end", "id": _TEXT_PART}))
                    text_open = False
                if reasoning is None:
                    reasoning = f"reasoning-{reasoning_parts}"
                    reasoning_parts += 1
                    out.append(sse({"type": "reasoning-start", "id": reasoning}))
                out.append(sse({"type": "reasoning-delta", "id": reasoning, "delta": event.text}))
                continue
            if reasoning is not None:
                out.append(sse({"type": "reasoning-end", "id": reasoning}))
                reasoning = None
            if isinstance(event, TextDelta):
                if not event.text:
                    continue
                if not text_open:
                    out.append(sse({"type": "text-start", "id": _TEXT_PART}))
                    text_open = True
                out.append(sse({"type": "text-delta", "id": _TEXT_PART, "delta": event.text}))
                continue
            if text_open:
                out.append(sse({"type": "text-end", "id": _TEXT_PART}))
                text_open = False
            if isinstance(event, MemorySaved):
                for note in event.memories:
                    memory = {"id": note.id, "type": note.type, "content": note.content, "importance": note.importance}
                    change = {"action": note.action, "memory": memory}
                    out.append(sse({"type": "data-memory", "id": note.id, "data": change, "transient": True}))
            elif isinstance(event, TurnFinished):
                if event.error is not None:
                    out.append(error_parts(event.error.code, event.error.message))
                if event.message_id is not None:
                    data: dict[str, Any] = {
                        "conversationId": started.conversation_id,
                        "summary": event.summary,
                        "messageCount": event.message_count,
                    }
                    out.append(sse({"type": "data-conversation", "data": data, "transient": True}))
                out.append(finish_part(event.status))
                out.append(DONE)
            elif isinstance(event, TurnFailed):
                out.append(error_parts(event.code, event.message))
                out.append(DONE)
        if out:
            yield b"".join(out)


class UIMessageStreamEncoder:
    wire = "ui"  # its label in the metrics

    async def stream(self, started: TurnStarted, batches: EventBatches) -> Response:
        return StreamBody(ui_chunks(started, batches), MEDIA_TYPE, UI_STREAM_HEADERS)


UI_MESSAGE_STREAM = UIMessageStreamEncoder()
