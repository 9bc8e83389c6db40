"""A minimal HTTP/1.1 keep-alive client for the load generator: asyncio + httptools' response parser.

A general client (httpx, aiohttp) spends 100+ microseconds of Python per request and per
chunk; on a 2-core machine shared with the server under test that time is taken from the
server and shows up in its numbers. This client does only what the benchmarks need and
timestamps bytes as the event loop hands them over: response headers, every delta (counted
by its `|` marker, see bench.mock_upstream.delta_text), the end of the body.
"""

import asyncio
import time
from dataclasses import dataclass, field
from typing import cast

import httptools

DELTA_MARKER = b"|"
BODY_KEEP_BYTES = 64 * 1024


@dataclass
class Response:
    status: int = 0
    t_start: float = 0.0
    t_headers: float = float("nan")
    t_end: float = float("nan")
    delta_times: list[float] = field(default_factory=list)
    body: bytes = b""
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.status == 200

    @property
    def ttfb(self) -> float:
        """Seconds from the request written to the first delta (the first text the user sees)."""
        return self.delta_times[0] - self.t_start if self.delta_times else float("nan")

    @property
    def total(self) -> float:
        return self.t_end - self.t_start


class _Protocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.response: Response | None = None
        self.done: asyncio.Future[Response] | None = None
        self.keep_body = False
        self.lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(f"parse error: {exc}")

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self._fail("connection lost")

    def _fail(self, reason: str) -> None:
        if self.response is not None and self.done is not None and not self.done.done():
            self.response.error = reason
            self.response.t_end = time.perf_counter()
            self.done.set_result(self.response)

    # httptools callbacks
    def on_headers_complete(self) -> None:
        if self.response is not None:
            self.response.t_headers = time.perf_counter()
            self.response.status = self.parser.get_status_code()

    def on_body(self, body: bytes) -> None:
        response = self.response
        if response is None:
            return
        n = body.count(DELTA_MARKER)
        if n:
            now = time.perf_counter()
            response.delta_times.extend([now] * n)
        if self.keep_body and len(response.body) < BODY_KEEP_BYTES:
            response.body += body

    def on_message_complete(self) -> None:
        response = self.response
        if response is not None and self.done is not None and not self.done.done():
            response.t_end = time.perf_counter()
            self.done.set_result(response)


class Connection:
    """One keep-alive connection; requests go one after another (no pipelining)."""

    def __init__(self, host: str, port: int):
        if not host.startswith("127.") and host not in ("localhost", "::1"):
            raise ValueError("the load generator only talks to loopback addresses")
        self.host = host
        self.port = port
        self._protocol: _Protocol | None = None

    async def _connect(self) -> _Protocol:
        loop = asyncio.get_running_loop()
        _transport, protocol = await loop.create_connection(_Protocol, self.host, self.port)
        return protocol

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: bytes = b"",
        headers: dict[str, str] | None = None,
        keep_body: bool = False,
        timeout_s: float = 60.0,
    ) -> Response:
        protocol = self._protocol
        if protocol is None or protocol.lost or protocol.transport is None or protocol.transport.is_closing():
            try:
                protocol = self._protocol = await asyncio.wait_for(self._connect(), timeout_s)
            except (OSError, TimeoutError) as exc:
                return Response(error=f"connect failed: {exc!r}", t_start=time.perf_counter())
        lines = [f"{method} {path} HTTP/1.1", f"host: {self.host}:{self.port}", f"content-length: {len(body)}"]
        for name, value in (headers or {}).items():
            lines.append(f"{name}: {value}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        protocol.parser = httptools.HttpResponseParser(protocol)
        protocol.keep_body = keep_body
        response = protocol.response = Response()
        protocol.done = asyncio.get_running_loop().create_future()
        assert protocol.transport is not None
        response.t_start = time.perf_counter()
        protocol.transport.write(head + body)
        try:
            result = await asyncio.wait_for(protocol.done, timeout_s)
        except TimeoutError:
            response.error = "timeout"
            response.t_end = time.perf_counter()
            self.close()
            return response
        if result.error is not None or not protocol.parser.should_keep_alive():
            self.close()
        return result

    def close(self) -> None:
        if self._protocol is not None and self._protocol.transport is not None:
            self._protocol.transport.close()
        self._protocol = None
