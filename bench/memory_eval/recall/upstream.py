"""The recall benchmark's LLM: an OpenAI-compatible chat-completions server on loopback, in-process.

Each dialog's agent has the handle `@recall-<dialog id>`, which memchat writes into the profile
message of every request it sends; the server finds it there, streams that dialog's scripted reply
(set before each turn) exactly as OpenAI does (`data: {chunk}` ... `data: [DONE]`), and keeps the
last streamed request of each dialog, so that dialogs can run side by side on one upstream.
"""

import asyncio
import json
import re
import socket
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

HANDLE = re.compile(r"@recall-([A-Za-z0-9_-]+)")
FALLBACK_REPLY = "好的。"


def handle_of(dialog_id: str) -> str:
    return f"@recall-{dialog_id}"


def _chunk(completion_id: str, model: str, delta: dict[str, Any], finish_reason: str | None) -> bytes:
    body = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
    }
    return b"data: " + json.dumps(body, ensure_ascii=False).encode() + b"\n\n"


def dialog_of(body: dict[str, Any]) -> str | None:
    """The dialog a request belongs to: the handle in one of its non-system messages."""
    for message in body.get("messages", []):
        content = message.get("content")
        if message.get("role") != "system" and isinstance(content, str):
            found = HANDLE.search(content)
            if found:
                return found.group(1)
    return None


class ScriptedUpstream:
    """Replies per dialog; `last[dialog]` is the last streamed request body that dialog's agent sent."""

    def __init__(self) -> None:
        self.replies: dict[str, str] = {}
        self.last: dict[str, dict[str, Any]] = {}
        self.unrouted = 0  # streamed requests with no dialog's handle (should stay 0)
        self.other_requests = 0  # non-streamed requests (an LLM extractor or summary)
        self.base_url = ""
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None

    def script(self, dialog_id: str, reply: str) -> None:
        self.replies[dialog_id] = reply

    async def _completions(self, request: Request) -> Response:
        body = await request.json()
        model = body.get("model", "recall-mock")
        completion_id = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        dialog = dialog_of(body)
        if not body.get("stream"):
            self.other_requests += 1
            message = {"role": "assistant", "content": json.dumps({"operations": []})}
            return JSONResponse(
                {
                    "id": completion_id,
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
            )
        if dialog is None:
            self.unrouted += 1
            text = FALLBACK_REPLY
        else:
            self.last[dialog] = body
            text = self.replies.get(dialog, FALLBACK_REPLY)
        return StreamingResponse(self._stream(text, completion_id, model), media_type="text/event-stream")

    async def _stream(self, text: str, completion_id: str, model: str) -> AsyncIterator[bytes]:
        yield _chunk(completion_id, model, {"role": "assistant", "content": ""}, None)
        for start in range(0, len(text), 8):
            yield _chunk(completion_id, model, {"content": text[start : start + 8]}, None)
        yield _chunk(completion_id, model, {}, "stop")
        yield b"data: [DONE]\n\n"

    async def start(self) -> "ScriptedUpstream":
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
        app = Starlette(routes=[Route("/v1/chat/completions", self._completions, methods=["POST"])])
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._task.done():
                self._task.result()
            await asyncio.sleep(0.01)
        return self

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task
