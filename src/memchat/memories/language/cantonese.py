"""Cantonese said in Chinese characters, read as Mandarin for the slot and change patterns. Pure.

我喺广州做嘢 / 我搬咗去香港啦 is a city and a move, as 我在广州工作 / 我搬去香港了 are; the patterns
are written for Mandarin, so the few function words that differ are put in Mandarin first: 喺 (在),
咗 (the 了 after a verb, dropped: 搬咗去 -> 搬去, as the change patterns expect), 紧 after a verb (在…),
嘅 (的), 係 (是), 唔 (不), 冇 (没有), 佢 (他), 嚟 (来), 啲 (些), 嘢 (东西), 返工 (上班), 做嘢 (工作),
搵 (找). Text with none of these markers is returned as it is, so Mandarin is never touched.
"""

import re

_MARKERS = re.compile(r"[喺咗嘅係唔冇佢嚟搵啲嘢]|[做读住学返]紧")
_PROGRESSIVE = re.compile(r"([做读住学返])紧")
_WORDS = (
    ("返工", "上班"),
    ("做嘢", "工作"),
    ("搵", "找"),
    ("喺", "在"),
    ("咗", ""),
    ("嘅", "的"),
    ("係", "是"),
    ("唔", "不"),
    ("冇", "没有"),
    ("佢", "他"),
    ("嚟", "来"),
    ("啲", "些"),
    ("嘢", "东西"),
)


def as_mandarin(text: str) -> str:
    """`text` with its Cantonese function words in Mandarin; Mandarin and English unchanged."""
    if not _MARKERS.search(text):
        return text
    text = _PROGRESSIVE.sub(r"在\1", text)
    for cantonese, mandarin in _WORDS:
        text = text.replace(cantonese, mandarin)
    return text
