"""The topic prototypes' vectors (`topics.py`), and how near a statement's vector is to each topic.

Each vector is centred on the mean prototype of its own language (`EmbeddingExtractor.language_center`):
centred on one language's mean, the other language's statements all score high on every topic.
"""

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from memchat.memories.language.dedupe import center_vectors
from memchat.memories.language.embedder import Matrix, Vector
from memchat.memories.language.topics import TOPIC_PROTOTYPES


class Topics:
    """The topic prototypes' vectors, and the topic of a statement's vector."""

    def __init__(self, texts: Sequence[str], names: Sequence[str], vectors: Matrix, centre: Callable[[str], Vector]):
        self._labels = sorted(set(names))
        self._centre = centre
        centred = np.stack([center_vectors(v, centre(t)) for t, v in zip(texts, np.asarray(vectors), strict=True)])
        self._matrix = centred / np.maximum(np.linalg.norm(centred, axis=1, keepdims=True), 1e-12)
        self._rows = {label: [i for i, n in enumerate(names) if n == label] for label in self._labels}

    @staticmethod
    def texts() -> tuple[list[str], list[str]]:
        """(topic of each prototype, its text), in one order."""
        pairs = [(topic, text) for topic, texts in TOPIC_PROTOTYPES.items() for text in texts]
        return [p[0] for p in pairs], [p[1] for p in pairs]

    def scores(self, vector: npt.ArrayLike, text: str) -> dict[str, float]:
        """Each topic's nearness to a passage vector of `text` (the best of its prototypes, centred cosine)."""
        v = center_vectors(vector, self._centre(text)).reshape(-1)
        norm = float(np.linalg.norm(v))
        if norm == 0.0:
            return {label: 0.0 for label in self._labels}
        scores = self._matrix @ (v / norm)
        return {label: float(scores[rows].max()) for label, rows in self._rows.items()}
