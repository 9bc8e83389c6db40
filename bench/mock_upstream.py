"""A paced OpenAI-compatible chat-completions server for the benchmarks, in its own process.

It streams exactly as OpenAI does: `data: {chunk}\\n\\n` events whose `choices[0].delta.content`
carries the text, a last chunk with `finish_reason: "stop"`, then `data: [DONE]\\n\\n`. Each reply
is `deltas` pieces sent `gap_ms` apart (0: all at once). Every piece ends in `|`, so a client
counts deltas by counting that byte, in the SSE here and in memchat's plain-text relay alike.

It is raw asyncio on uvloop with httptools' parser (what uvicorn uses) and pre-encoded frames,
so that it costs a few microseconds per delta and is never what a benchmark measures. Writes are
scheduled at absolute times (stream start + i * gap), and the server keeps its own lag
statistics (GET /_mock/stats) so a run can tell when the mock itself fell behind.

    python -m bench.mock_upstream --port 18090 [--deltas 64] [--gap-ms 20]

Control: POST /_mock/config {"deltas": N, "gapMs": G} sets the defaults; the headers
`x-mock-deltas` / `x-mock-gap-ms` override them for one request. GET /_mock/stats,
POST /_mock/stats/reset, GET /healthz.
"""

import argparse
import asyncio
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, cast

import httptools
import orjson
import uvloop

HEADERS_SSE = (
    b"HTTP/1.1 200 OK\r\n"
    b"content-type: text/event-stream; charset=utf-8\r\n"
    b"cache-control: no-cache\r\n"
    b"transfer-encoding: chunked\r\n"
    b"connection: keep-alive\r\n\r\n"
)
LAST_CHUNK = b"0\r\n\r\n"
LATE_WRITE_S = 0.005  # a write this much past its schedule counts as a late write of the mock itself


def delta_text(i: int) -> str:
    """The i-th piece of every reply: short, ASCII, ends with the delta marker `|`."""
    return f"tok{i:03d}|"


def _chunked(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _event(delta: dict[str, Any], finish_reason: str | None) -> bytes:
    chunk = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "mock",
        "system_fingerprint": "fp_bench",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
    }
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def build_frames(deltas: int) -> list[bytes]:
    """The HTTP chunks of one reply: frame 0 (role + first delta) ... frame n-1 (last delta + stop + [DONE])."""
    events = [_event({"content": delta_text(i)}, None) for i in range(deltas)]
    events[0] = _event({"role": "assistant", "content": ""}, None) + events[0]
    events[-1] += _event({}, "stop") + b"data: [DONE]\n\n"
    frames = [_chunked(e) for e in events]
    frames[-1] += LAST_CHUNK
    return frames


def completion_body(deltas: int) -> bytes:
    text = "".join(delta_text(i) for i in range(deltas))
    return orjson.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": "mock",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": deltas, "total_tokens": deltas + 1},
        }
    )


@dataclass
class Stats:
    requests: int = 0
    streams_started: int = 0
    streams_finished: int = 0
    streams_aborted: int = 0
    open_streams: int = 0
    max_open_streams: int = 0
    writes: int = 0
    late_writes: int = 0
    max_lag_ms: float = 0.0
    started_at: float = field(default_factory=time.monotonic)

    def as_json(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "streamsStarted": self.streams_started,
            "streamsFinished": self.streams_finished,
            "streamsAborted": self.streams_aborted,
            "openStreams": self.open_streams,
            "maxOpenStreams": self.max_open_streams,
            "writes": self.writes,
            "lateWrites": self.late_writes,
            "maxLagMs": round(self.max_lag_ms, 3),
        }


class Upstream:
    def __init__(self, deltas: int, gap_ms: float):
        self.deltas = deltas
        self.gap_ms = gap_ms
        self.stats = Stats()
        self._frames: dict[int, list[bytes]] = {}

    def frames(self, deltas: int) -> list[bytes]:
        frames = self._frames.get(deltas)
        if frames is None:
            frames = self._frames[deltas] = build_frames(deltas)
        return frames


class _Request:
    __slots__ = ("body", "headers", "method", "url")

    def __init__(self) -> None:
        self.url = b""
        self.method = b""
        self.headers: dict[bytes, bytes] = {}
        self.body: list[bytes] = []


class MockProtocol(asyncio.Protocol):
    """One client connection: HTTP/1.1 keep-alive, requests answered one after another."""

    def __init__(self, upstream: Upstream):
        self._upstream = upstream
        self._loop = asyncio.get_running_loop()
        self._parser = httptools.HttpRequestParser(self)
        self._transport: asyncio.Transport | None = None
        self._current = _Request()
        self._pending: deque[_Request] = deque()
        self._streaming = False
        self._keep_alive = True

    # --- asyncio.Protocol ---
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement asyncio.Transport without subclassing it.
        self._transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError:
            self._close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None

    # --- httptools callbacks ---
    def on_url(self, url: bytes) -> None:
        self._current.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self._current.headers[name.lower()] = value

    def on_body(self, body: bytes) -> None:
        self._current.body.append(body)

    def on_message_complete(self) -> None:
        request, self._current = self._current, _Request()
        request.method = self._parser.get_method()
        self._keep_alive = self._parser.should_keep_alive()
        if self._streaming:
            self._pending.append(request)  # pipelined: answered when the stream ends
        else:
            self._handle(request)

    # --- requests ---
    def _close(self) -> None:
        if self._transport is not None:
            self._transport.close()

    def _respond(self, status: str, body: bytes, content_type: bytes = b"application/json") -> None:
        if self._transport is None:
            return
        head = b"HTTP/1.1 %s\r\ncontent-type: %s\r\ncontent-length: %d\r\n\r\n" % (
            status.encode(),
            content_type,
            len(body),
        )
        self._transport.write(head + body)
        if not self._keep_alive:
            self._close()

    def _handle(self, request: _Request) -> None:
        up = self._upstream
        path = request.url.split(b"?", 1)[0]
        if path.endswith(b"/chat/completions") and request.method == b"POST":
            up.stats.requests += 1
            try:
                payload = orjson.loads(b"".join(request.body))
            except orjson.JSONDecodeError:
                self._respond("400 Bad Request", b'{"error":{"message":"bad json","type":"invalid_request_error"}}')
                return
            deltas = int(request.headers.get(b"x-mock-deltas", up.deltas))
            gap_ms = float(request.headers.get(b"x-mock-gap-ms", up.gap_ms))
            if payload.get("stream"):
                self._start_stream(max(1, deltas), max(0.0, gap_ms))
            else:
                self._respond("200 OK", completion_body(max(1, deltas)))
        elif path == b"/_mock/config" and request.method == b"POST":
            config = orjson.loads(b"".join(request.body) or b"{}")
            up.deltas = int(config.get("deltas", up.deltas))
            up.gap_ms = float(config.get("gapMs", up.gap_ms))
            self._respond("200 OK", orjson.dumps({"deltas": up.deltas, "gapMs": up.gap_ms}))
        elif path == b"/_mock/stats":
            if request.method == b"POST":
                open_streams = up.stats.open_streams
                up.stats = Stats(open_streams=open_streams, max_open_streams=open_streams)
            self._respond("200 OK", orjson.dumps(up.stats.as_json()))
        elif path == b"/healthz":
            self._respond("200 OK", b'{"status":"ok"}')
        else:
            self._respond("404 Not Found", b'{"error":{"message":"not found","type":"not_found"}}')

    def _start_stream(self, deltas: int, gap_ms: float) -> None:
        assert self._transport is not None
        stats = self._upstream.stats
        frames = self._upstream.frames(deltas)
        stats.streams_started += 1
        stats.open_streams += 1
        stats.max_open_streams = max(stats.max_open_streams, stats.open_streams)
        if gap_ms <= 0:
            self._transport.write(HEADERS_SSE + b"".join(frames))
            stats.writes += 1
            self._end_stream(aborted=False)
            return
        self._streaming = True
        self._transport.write(HEADERS_SSE + frames[0])
        stats.writes += 1
        if len(frames) == 1:
            self._end_stream(aborted=False)
            return
        start = self._loop.time()
        gap_s = gap_ms / 1000.0
        self._loop.call_at(start + gap_s, self._step, frames, 1, start, gap_s)

    def _step(self, frames: list[bytes], i: int, start: float, gap_s: float) -> None:
        stats = self._upstream.stats
        transport = self._transport
        if transport is None or transport.is_closing():
            self._end_stream(aborted=True)
            return
        now = self._loop.time()
        lag = now - (start + i * gap_s)
        if lag > LATE_WRITE_S:
            stats.late_writes += 1
        if lag * 1000.0 > stats.max_lag_ms:
            stats.max_lag_ms = lag * 1000.0
        transport.write(frames[i])
        stats.writes += 1
        if i + 1 < len(frames):
            self._loop.call_at(start + (i + 1) * gap_s, self._step, frames, i + 1, start, gap_s)
        else:
            self._end_stream(aborted=False)

    def _end_stream(self, *, aborted: bool) -> None:
        stats = self._upstream.stats
        stats.open_streams -= 1
        if aborted:
            stats.streams_aborted += 1
        else:
            stats.streams_finished += 1
        self._streaming = False
        if not self._keep_alive:
            self._close()
        elif self._pending and not aborted:
            self._handle(self._pending.popleft())


async def serve(host: str, port: int, deltas: int, gap_ms: float, ready: asyncio.Event | None = None) -> None:
    upstream = Upstream(deltas, gap_ms)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: MockProtocol(upstream), host, port, backlog=4096, reuse_address=True)
    if ready is not None:
        ready.set()
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=18090)
    parser.add_argument("--deltas", type=int, default=64)
    parser.add_argument("--gap-ms", type=float, default=20.0)
    args = parser.parse_args()
    if not args.host.startswith("127.") and args.host not in ("localhost", "::1"):
        parser.error("the mock upstream binds loopback addresses only")
    uvloop.run(serve(args.host, args.port, args.deltas, args.gap_ms))


if __name__ == "__main__":
    main()
