import pytest

from memchat.text import normalize


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("  你好  ", "你好"),
        ("a\r\nb\rc", "a\nb\nc"),
        ("a\x00b\x07c\x1bd", "abcd"),
        ("tab\tkept\nnewline kept", "tab\tkept\nnewline kept"),
        ("\x00 \r\n ", None),
        ("", None),
        (None, None),
        ("\u3000全角空格\u3000", "全角空格"),
    ],
)
def test_normalize(raw: str | None, expected: str | None) -> None:
    assert normalize(raw) == expected
