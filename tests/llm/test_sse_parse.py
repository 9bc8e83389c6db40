"""The SSE reader of the streamed completion, fed every way a byte stream can be cut."""

from collections.abc import AsyncIterator

import pytest

from memchat.llm.stream import sse_data

STREAM = (
    b": keep-alive comment\n\n"
    b'data: {"a": 1}\n\n'
    b"event: message\ndata: first line\ndata:second line\n\n"
    b"id: 7\n\n"
    b'data: {"b": "\xe4\xbd\xa0\xe5\xa5\xbd"}\n\n'
    b"data: [DONE]\n\n"
)
EXPECTED = [b'{"a": 1}', b"first line\nsecond line", b'{"b": "\xe4\xbd\xa0\xe5\xa5\xbd"}', b"[DONE]"]


async def _pieces(data: bytes, cuts: list[int]) -> AsyncIterator[bytes]:
    start = 0
    for cut in [*cuts, len(data)]:
        yield data[start:cut]
        start = cut


async def _read(data: bytes, cuts: list[int]) -> list[bytes]:
    return [event async for event in sse_data(_pieces(data, cuts))]


async def test_every_single_cut_gives_the_same_events() -> None:
    for cut in range(len(STREAM) + 1):
        assert await _read(STREAM, [cut]) == EXPECTED, cut


@pytest.mark.parametrize("newline", [b"\r\n", b"\r"])
async def test_crlf_and_cr_line_ends_at_every_cut(newline: bytes) -> None:
    data = STREAM.replace(b"\n", newline)
    for cut in range(len(data) + 1):
        assert await _read(data, [cut]) == EXPECTED, cut


async def test_byte_by_byte_and_a_last_event_without_blank_line() -> None:
    data = b'data: {"x": 1}\n\ndata: tail'
    assert await _read(data, list(range(1, len(data)))) == [b'{"x": 1}', b"tail"]


async def test_an_event_over_the_limit_raises_and_one_at_the_limit_does_not() -> None:
    from memchat.llm.errors import UpstreamEventTooLarge

    async def body(event: bytes) -> AsyncIterator[bytes]:
        for start in range(0, len(event), 7):  # a slow trickle: the limit counts what is pending
            yield event[start : start + 7]

    fits = b"data: " + b"x" * 994 + b"\n\n"
    assert [e async for e in sse_data(body(fits), max_event_bytes=1001)] == [b"x" * 994]
    with pytest.raises(UpstreamEventTooLarge):
        _ = [e async for e in sse_data(body(b"data: " + b"x" * 2000), max_event_bytes=1000)]


async def test_many_events_in_tiny_chunks_come_out_whole_and_in_order() -> None:
    events = [f'{{"n": {i}}}'.encode() for i in range(500)]
    data = b"".join(b"data: " + e + b"\r\n\r\n" for e in events)
    assert await _read(data, list(range(3, len(data), 3))) == events
