"""The embeddings extractor's learning parts, numpy only (threadpoolctl holds its BLAS to one thread
where a product is small): a softmax regression, a classifier with one hidden layer and the blend of
the two (the pair classifier's), and the n-gram indicators put beside the sentence vectors. Pure and
deterministic."""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt
from threadpoolctl import ThreadpoolController

from memchat.memories.language.embedder import Matrix, Vector

# chosen by 5-fold cross-validation on the training split (bench/memory_eval/cv.py)
DEFAULT_L2 = 0.1
DEFAULT_EPOCHS = 300
DEFAULT_NGRAM_SIZES = (1, 2)
_NGRAM_MIN_COUNT = 2
_LEARNING_RATE = 1.0
_NOT_A_WORD = re.compile(r"[\s\W_]+")


class SoftmaxClassifier:
    """Multinomial logistic regression on standardised vectors, full-batch gradient descent (deterministic)."""

    def __init__(self, mean: Vector, scale: Vector, weights: Matrix, bias: Vector) -> None:
        self._mean = mean
        self._scale = scale
        self._weights = weights
        self._bias = bias

    @classmethod
    def fit(
        cls,
        vectors: npt.ArrayLike,
        labels: Sequence[int],
        n_classes: int,
        *,
        l2: float = DEFAULT_L2,
        epochs: int = DEFAULT_EPOCHS,
        plain_columns: int = 0,
        plain_weight: float = 1.0,
    ) -> "SoftmaxClassifier":
        """`plain_columns`: how many trailing columns (0/1 indicators) are not standardised but
        multiplied by `plain_weight`: a rare indicator would otherwise be scaled up to dominate."""
        x, y = _rows_and_labels(vectors, labels, np.float64)
        mean = x.mean(axis=0)
        scale = x.std(axis=0) + 1e-6
        if plain_columns:
            mean[-plain_columns:] = 0.0
            scale[-plain_columns:] = 1.0 / plain_weight
        xs = (x - mean) / scale
        n, dim = xs.shape
        onehot = np.eye(n_classes)[y]
        weights = np.zeros((dim, n_classes))
        bias = np.zeros(n_classes)
        for _ in range(epochs):
            grad = (_softmax(xs @ weights + bias) - onehot) / n
            weights -= _LEARNING_RATE * (xs.T @ grad + l2 * weights)
            bias -= _LEARNING_RATE * grad.sum(axis=0)
        as32 = np.float32
        return cls(mean.astype(as32), scale.astype(as32), weights.astype(as32), bias.astype(as32))

    def arrays(self) -> dict[str, Matrix | Vector]:
        """What the classifier is, to be saved (`from_arrays` reads it back)."""
        return {"mean": self._mean, "scale": self._scale, "weights": self._weights, "bias": self._bias}

    @classmethod
    def from_arrays(cls, arrays: dict[str, npt.NDArray[np.float32]]) -> "SoftmaxClassifier":
        as32 = np.float32
        return cls(*(np.asarray(arrays[k], dtype=as32) for k in ("mean", "scale", "weights", "bias")))

    def predict_proba(self, vectors: npt.ArrayLike) -> Matrix:
        x = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        return _softmax((x - self._mean) / self._scale @ self._weights + self._bias).astype(np.float32)


class HiddenLayerClassifier:
    """A softmax over one hidden layer of rectified units, on standardised vectors: what the linear
    `SoftmaxClassifier` cannot read, a relation that holds only when two features meet (the two
    statements about the same thing, and their values apart). Fitted by minibatch Adam with dropout
    and weight decay from a fixed seed, so the same rows make the same model."""

    def __init__(
        self, mean: Vector, scale: Vector, hidden: Matrix, hidden_bias: Vector, weights: Matrix, bias: Vector
    ) -> None:
        self._mean = mean
        self._scale = scale
        self._hidden = hidden
        self._hidden_bias = hidden_bias
        self._weights = weights
        self._bias = bias

    @classmethod
    def fit(
        cls,
        vectors: npt.ArrayLike,
        labels: Sequence[int],
        n_classes: int,
        *,
        units: int,
        epochs: int,
        decay: float,
        dropout: float,
        seed: int,
        rate: float = 1e-3,
        batch: int = 256,
    ) -> "HiddenLayerClassifier":
        x, y = _rows_and_labels(vectors, labels, np.float32)
        rng = np.random.default_rng(seed)
        mean = x.mean(axis=0)
        scale = x.std(axis=0) + 1e-6
        xs = ((x - mean) / scale).astype(np.float32)
        n, dim = xs.shape
        params = [
            (rng.standard_normal((dim, units)) * np.sqrt(2.0 / dim)).astype(np.float32),
            np.zeros(units, dtype=np.float32),
            (rng.standard_normal((units, n_classes)) * np.sqrt(1.0 / units)).astype(np.float32),
            np.zeros(n_classes, dtype=np.float32),
        ]
        first, second = [np.zeros_like(q) for q in params], [np.zeros_like(q) for q in params]
        onehot = np.eye(n_classes, dtype=np.float32)[y]
        step = 0
        for _ in range(epochs):
            order = rng.permutation(n)
            for start in range(0, n, batch):
                rows = order[start : start + batch]
                w1, b1, w2, b2 = params
                x_batch = xs[rows]
                pre = x_batch @ w1 + b1
                keep = (rng.random(pre.shape) > dropout).astype(np.float32) / (1.0 - dropout)
                active = np.maximum(pre, 0.0) * keep
                g = ((_softmax(active @ w2 + b2) - onehot[rows]) / len(rows)).astype(np.float32)
                g_pre = (g @ w2.T) * keep * (pre > 0)
                grads = [x_batch.T @ g_pre + decay * w1, g_pre.sum(axis=0), active.T @ g + decay * w2, g.sum(axis=0)]
                step += 1
                for i, grad in enumerate(grads):
                    first[i] = 0.9 * first[i] + 0.1 * grad
                    second[i] = 0.999 * second[i] + 0.001 * grad * grad
                    moved = rate * (first[i] / (1 - 0.9**step)) / (np.sqrt(second[i] / (1 - 0.999**step)) + 1e-8)
                    params[i] = (params[i] - moved).astype(np.float32)
        return cls(mean, scale, *params)

    def arrays(self) -> dict[str, Matrix | Vector]:
        """What the classifier is, to be saved (`from_arrays` reads it back)."""
        return {
            "mean": self._mean,
            "scale": self._scale,
            "layer": self._hidden,
            "layer_bias": self._hidden_bias,
            "weights": self._weights,
            "bias": self._bias,
        }

    @classmethod
    def from_arrays(cls, arrays: dict[str, npt.NDArray[np.float32]]) -> "HiddenLayerClassifier":
        keys = ("mean", "scale", "layer", "layer_bias", "weights", "bias")
        return cls(*(np.asarray(arrays[k], dtype=np.float32) for k in keys))

    def predict_proba(self, vectors: npt.ArrayLike) -> Matrix:
        x = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        with _blas().limit(limits=1, user_api="blas"):
            active = np.maximum((x - self._mean) / self._scale @ self._hidden + self._hidden_bias, 0.0)
        return _softmax(active @ self._weights + self._bias).astype(np.float32)


@cache
def _blas() -> ThreadpoolController:
    """numpy's BLAS, held to one thread for the hidden layer's product: a few rows by 256 units is
    too small to share, and a second thread only spins (with two, extraction's CPU per turn was 1.5x:
    bench/memory_eval/README.md, twenty-second round)."""
    return ThreadpoolController()


class BlendedClassifier:
    """A softmax regression's and a `HiddenLayerClassifier`'s probabilities, fitted on the same rows and
    mixed (`weight`: the hidden layer's share): the hidden layer reads where two features meet, the
    regression keeps to single ones and is the surer reader of repeats, and the mix is warier than the
    hidden layer alone of reading a change in a remark."""

    def __init__(self, linear: SoftmaxClassifier, hidden: HiddenLayerClassifier, weight: float) -> None:
        self.linear = linear
        self.hidden = hidden
        self.weight = weight

    def arrays(self) -> dict[str, Matrix | Vector]:
        """Both members' arrays, the regression's under `linear_`, the hidden layer's under `hidden_`."""
        parts = (("linear_", self.linear.arrays()), ("hidden_", self.hidden.arrays()))
        mixed = {prefix + key: value for prefix, arrays in parts for key, value in arrays.items()}
        return mixed | {"weight": np.asarray([self.weight], dtype=np.float32)}

    @classmethod
    def from_arrays(cls, arrays: dict[str, npt.NDArray[np.float32]]) -> "BlendedClassifier":
        def part(prefix: str) -> dict[str, npt.NDArray[np.float32]]:
            return {k.removeprefix(prefix): v for k, v in arrays.items() if k.startswith(prefix)}

        linear = SoftmaxClassifier.from_arrays(part("linear_"))
        return cls(linear, HiddenLayerClassifier.from_arrays(part("hidden_")), float(arrays["weight"][0]))

    @staticmethod
    def mix(linear: Matrix, hidden: Matrix, weight: float) -> Matrix:
        """The two members' probabilities mixed, `weight` the hidden layer's share."""
        return ((1.0 - weight) * linear + weight * hidden).astype(np.float32)

    def predict_proba(self, vectors: npt.ArrayLike) -> Matrix:
        return self.mix(self.linear.predict_proba(vectors), self.hidden.predict_proba(vectors), self.weight)


def _rows_and_labels(
    vectors: npt.ArrayLike, labels: Sequence[int], dtype: type[np.floating[Any]]
) -> tuple[npt.NDArray[np.floating[Any]], npt.NDArray[np.int64]]:
    x = np.asarray(vectors, dtype=dtype)
    y = np.asarray(labels, dtype=np.int64)
    if x.ndim != 2 or x.shape[0] != y.shape[0] or x.shape[0] == 0:
        raise ValueError("need one label per vector and at least one vector")
    return x, y


def _softmax(z: npt.NDArray[np.floating]) -> npt.NDArray[np.float64]:
    shifted = np.asarray(z, dtype=np.float64) - np.max(z, axis=1, keepdims=True)
    e = np.exp(shifted)
    return np.asarray(e / e.sum(axis=1, keepdims=True), dtype=np.float64)


class CharNgrams:
    """Which of the prototypes' n-grams a text contains (0/1 per n-gram).

    Chinese is written without spaces, so character n-grams stand in for words: the cue words of a
    type (回复, 叫我, 不要问, 希望我们) that the sentence vector blurs. For a language with spaces
    (`words=True`) the n-grams are of words (call me, don't ask). The vocabulary is the n-grams
    found in at least two prototypes, punctuation and spaces dropped.
    """

    def __init__(
        self, vocabulary: Sequence[str], sizes: Sequence[int] = DEFAULT_NGRAM_SIZES, *, words: bool = False
    ) -> None:
        self._index = {gram: i for i, gram in enumerate(vocabulary)}
        self._sizes = tuple(sizes)
        self._words = words

    @staticmethod
    def grams(text: str, sizes: Sequence[int] = DEFAULT_NGRAM_SIZES, *, words: bool = False) -> set[str]:
        found: set[str] = set()
        runs = [run for run in _NOT_A_WORD.split(text.lower()) if run]
        if words:
            for n in sizes:
                found.update(" ".join(runs[i : i + n]) for i in range(len(runs) - n + 1))
            return found
        for run in runs:
            for n in sizes:
                found.update(run[i : i + n] for i in range(len(run) - n + 1))
        return found

    @classmethod
    def fit(
        cls, texts: Sequence[str], sizes: Sequence[int] = DEFAULT_NGRAM_SIZES, *, words: bool = False
    ) -> "CharNgrams":
        counts: dict[str, int] = {}
        for text in texts:
            for gram in cls.grams(text, sizes, words=words):
                counts[gram] = counts.get(gram, 0) + 1
        return cls(sorted(g for g, c in counts.items() if c >= _NGRAM_MIN_COUNT), sizes, words=words)

    @property
    def size(self) -> int:
        return len(self._index)

    @property
    def vocabulary(self) -> list[str]:
        return sorted(self._index, key=self._index.__getitem__)

    @property
    def sizes(self) -> tuple[int, ...]:
        return self._sizes

    @property
    def words(self) -> bool:
        return self._words

    def transform(self, texts: Sequence[str]) -> Matrix:
        out = np.zeros((len(texts), len(self._index)), dtype=np.float32)
        for row, text in enumerate(texts):
            for gram in self.grams(text, self._sizes, words=self._words):
                column = self._index.get(gram)
                if column is not None:
                    out[row, column] = 1.0
        return out


def features(ngrams: CharNgrams | None, texts: Sequence[str], vectors: npt.ArrayLike) -> Matrix:
    """The sentence vectors, each beside its text's n-gram indicators."""
    matrix = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    if ngrams is None:
        return matrix
    return np.concatenate([matrix, ngrams.transform(texts)], axis=1)


@dataclass(frozen=True)
class NgramSoftmax:
    """One language's classifier and the n-grams beside its sentence vectors."""

    classifier: SoftmaxClassifier
    ngrams: CharNgrams | None

    def predict_proba(self, texts: Sequence[str], vectors: npt.ArrayLike) -> Matrix:
        return self.classifier.predict_proba(features(self.ngrams, texts, vectors))
