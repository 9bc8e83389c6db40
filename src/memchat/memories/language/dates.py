"""The day a dated life event happens, from what the user said and when. Pure.

我下周三面试, said on Thursday 2026-12-03, is an event on 2026-12-09. Relative expressions
(今天/明天/后天/昨天, 这周五/下周三/下下周一, 周末, 月底/下个月初, 12月20号, 20号) are resolved
against the message's day in the user's timezone, and so are English ones (`dates_en.py`). The first
expression in the text wins.
"""

import calendar
import re
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from memchat.memories.language.dates_en import english_dates

_CN_DIGITS = {d: i for i, d in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}
_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5}
_NUM = r"(\d{1,2}|[一二三四五六七八九十]{1,3})"

_RELATIVE_DAYS = (
    ("大后天", 3),
    ("后天", 2),
    ("明天", 1),
    ("明早", 1),
    ("明晚", 1),
    ("今天", 0),
    ("今晚", 0),
    ("前天", -2),
    ("昨天", -1),
    ("昨晚", -1),
)
_WEEKDAY = re.compile(r"(?<!每)(?<!每个)(下下|下|这|本|上)?(?:个)?(?:周|星期|礼拜)([一二三四五六日天末])")
_MONTH_DAY = re.compile(_NUM + r"月" + _NUM + r"[日号]")
_DAY_ONLY = re.compile(r"(?<!每)(?<!每个)(?<!每月)(下个?月|这个?月|本月)?" + _NUM + r"[日号]")
_MONTH_EDGE = re.compile(r"(下个?月|这个?月|本月)?(月底|月末|月初|底|初)")


def _number(text: str) -> int:
    if text.isdigit():
        return int(text)
    if text == "十":
        return 10
    if text.startswith("十"):
        return 10 + _CN_DIGITS[text[1]]
    if text.endswith("十"):
        return 10 * _CN_DIGITS[text[0]]
    if "十" in text:
        tens, ones = text.split("十")
        return 10 * _CN_DIGITS[tens] + _CN_DIGITS[ones]
    return _CN_DIGITS.get(text, 0)


def _add_months(day: date, months: int) -> tuple[int, int]:
    index = day.year * 12 + day.month - 1 + months
    return index // 12, index % 12 + 1


def _safe_date(year: int, month: int, day: int) -> date | None:
    if not 1 <= month <= 12:
        return None
    if not 1 <= day <= calendar.monthrange(year, month)[1]:
        return None
    return date(year, month, day)


def local_day(said_at_ms: int, timezone: str) -> date:
    return datetime.fromtimestamp(said_at_ms / 1000, ZoneInfo(timezone)).date()


def resolve_event_date(text: str, said_at_ms: int, timezone: str = "Asia/Shanghai") -> date | None:
    """The day the text's first date expression names, relative to when it was said; None without one."""
    today = local_day(said_at_ms, timezone)
    found: list[tuple[int, date]] = []
    for word, offset in _RELATIVE_DAYS:
        if (at := text.find(word)) != -1:
            found.append((at, today + timedelta(days=offset)))
    if m := _WEEKDAY.search(text):
        prefix, name = m.group(1) or "", m.group(2)
        monday = today - timedelta(days=today.weekday())
        weeks = {"下下": 2, "下": 1, "上": -1}.get(prefix, 0)
        day = monday + timedelta(weeks=weeks, days=_WEEKDAYS[name])
        if not prefix and day < today:
            day += timedelta(weeks=1)  # a bare 周三 said on Thursday is the next one
        found.append((m.start(), day))
    if m := _MONTH_DAY.search(text):
        month, day_number = _number(m.group(1)), _number(m.group(2))
        year = today.year
        candidate = _safe_date(year, month, day_number)
        if candidate is not None and candidate < today - timedelta(days=60):
            candidate = _safe_date(year + 1, month, day_number)  # 1月5号 said in December
        if candidate is not None:
            found.append((m.start(), candidate))
    elif m := _DAY_ONLY.search(text):
        months = 1 if (m.group(1) or "").startswith("下") else 0
        day_number = _number(m.group(2))
        if not m.group(1) and day_number < today.day:
            months = 1  # 5号 said on the 20th is next month's
        year, month = _add_months(today, months)
        if (candidate := _safe_date(year, month, day_number)) is not None:
            found.append((m.start(), candidate))
    if m := _MONTH_EDGE.search(text):
        if m.group(1) or m.group(2).startswith("月"):
            year, month = _add_months(today, 1 if (m.group(1) or "").startswith("下") else 0)
            last = calendar.monthrange(year, month)[1]
            day_number = last if m.group(2) in ("月底", "月末", "底") else 1
            found.append((m.start(), date(year, month, day_number)))
    found += english_dates(text, today)
    if not found:
        return None
    return min(found, key=lambda item: item[0])[1]
