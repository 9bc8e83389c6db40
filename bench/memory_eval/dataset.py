"""The labelled utterances of the memory evaluation, and the prototypes the package ships from them."""

import json
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATASET_PATH = HERE / "dataset.jsonl"
PROTOTYPES_PATH = HERE.parents[1] / "src" / "memchat" / "memories" / "data" / "prototypes.jsonl"


@dataclass(frozen=True)
class Example:
    id: str
    text: str
    remember: bool
    type: str | None
    group: str | None  # paraphrase group: the same memory said several ways
    contradicts: str | None  # id of an earlier statement this one changes
    split: str  # train | heldout


def load_dataset(path: Path = DATASET_PATH) -> list[Example]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    examples = [Example(**row) for row in rows]
    ids = {e.id for e in examples}
    for e in examples:
        if e.remember != (e.type is not None):
            raise ValueError(f"{e.id}: remember and type disagree")
        if e.contradicts is not None and e.contradicts not in ids:
            raise ValueError(f"{e.id}: contradicts unknown {e.contradicts}")
    return examples


SECOND_HELDOUT_PREFIX = "h2-"
ENGLISH_PREFIX = "en-"
TYPE_ONLY_PREFIXES = ("d-", SECOND_HELDOUT_PREFIX, ENGLISH_PREFIX)
"""Rows written apart from the rest, by LABELS.md, for remember-or-not and type: `d-*` (training),
`h2-*` (the second held-out set, ten users' voices), `en-*` (English: `en-t-*` training, `en-h-*`
held out)."""


def lang_of(example: Example) -> str:
    """Which of the extractor's classifiers the row trains: `en` for the English rows, else `zh`."""
    return "en" if example.id.startswith(ENGLISH_PREFIX) else "zh"


def labelled_for_dedupe(example: Example) -> bool:
    """Nobody marked which of the type-only rows say the same as another row, so the dedupe
    simulation (which counts a merge into an unmarked row as false) leaves them out."""
    return not example.id.startswith(TYPE_ONLY_PREFIXES)


def memory_key(example: Example, by_id: dict[str, Example]) -> str:
    """Which single memory an utterance is about: its group, or the statement it contradicts."""
    while example.contradicts is not None:
        example = by_id[example.contradicts]
    return example.group or example.id


def prototype_lines(examples: list[Example]) -> list[str]:
    return [
        json.dumps(
            {"id": e.id, "text": e.text, "type": e.type, **({"lang": "en"} if lang_of(e) == "en" else {})},
            ensure_ascii=False,
        )
        for e in examples
        if e.split == "train"
    ]


def write_prototypes(examples: list[Example], path: Path = PROTOTYPES_PATH) -> int:
    lines = prototype_lines(examples)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)
