"""Every error code the server can answer with has a sentence in each console locale, so an
error banner never falls back to the server's English inside a Chinese page (or the reverse)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LOCALES = ROOT / "web" / "src" / "locales"

# `code="x"` / `code = "x"` on errors, `_error(503, "x", ...)` / `_reject(send, 413, "x", ...)`,
# and the `{404: "not_found", ...}` table for Starlette's own errors.
CODE_PATTERNS = [
    re.compile(r'\bcode\s*=\s*"([a-z_]+)"'),
    re.compile(r'_(?:error|reject)\(\s*(?:send,\s*)?\d{3},\s*"([a-z_]+)"'),
    re.compile(r'\b\d{3}: "([a-z_]+)"'),
]


# The OpenAI-compatible /v1 answers in OpenAI's error shape to OpenAI clients, never to the console.
NOT_FOR_THE_CONSOLE = {"openai_compat"}


def server_codes() -> set[str]:
    codes: set[str] = set()
    package = ROOT / "src" / "memchat"
    for path in package.rglob("*.py"):
        if path.relative_to(package).parts[0] in NOT_FOR_THE_CONSOLE:
            continue
        text = path.read_text(encoding="utf-8")
        for pattern in CODE_PATTERNS:
            codes.update(pattern.findall(text))
    return codes


def locale_codes(name: str) -> set[str]:
    text = (LOCALES / name).read_text(encoding="utf-8")
    block = text[text.index("codes: {") :]
    block = block[: block.index("}")]
    return set(re.findall(r"^\s+([a-z_]+): ", block, re.MULTILINE))


def test_the_server_raises_the_codes_this_test_looks_for() -> None:
    codes = server_codes()
    assert {"invalid_credentials", "not_found", "method_not_allowed", "database_busy", "payload_too_large"} <= codes


@pytest.mark.parametrize("locale", ["zh-CN.ts", "en.ts"])
def test_every_server_error_code_has_a_message(locale: str) -> None:
    missing = server_codes() - locale_codes(locale)
    assert not missing, f"add these codes to web/src/locales/{locale}: {sorted(missing)}"


def test_the_locales_know_the_same_codes() -> None:
    assert locale_codes("zh-CN.ts") == locale_codes("en.ts")
