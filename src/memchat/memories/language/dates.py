"""The day a dated life event happens, from what the user said and when. Pure.

我下周三面试, said on Thursday 2026-12-03, is an event on 2026-12-09. Relative expressions
(今天/明天/后天/昨天, 这周五/下周三/下下周一, 周末, 月底/下个月初, 12月20号, 20号) are resolved
against the message's day in the user's timezone. The first expression in the text wins.

The same in English: "I'm getting LASIK on the 8th", said that Thursday, is an event on 2026-12-08:
today / tonight / tomorrow / yesterday, the day after tomorrow, (this / next / last) Tuesday (next as
下周二: next week's), December 20 / the 20th of December, on the 20th, the end of the month / next
month's start, in three days / in two weeks. A weekday said as a habit (every Tuesday, on Tuesdays;
我们周末才能见一面) and "three weeks ago" are no dates; a bare weekday in a statement told as done
("we did a 40 mile ride on Saturday") is the last one.
"""

import calendar
import re
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

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
# 一周四天 / 每周三次 (how often), 二号线 / 3号楼 (a line, a building): no day
_WEEKDAY = re.compile(
    r"(?<!每)(?<!每个)(下下|下|这|本|上)?(?:个)?(?:周|星期|礼拜)([一二三四五六日天末])(?![天次回趟个])"
)
# a bare 周末 / 周六 said as a habit (我们周末才能见一面, 周六一般在家): no one day
_HABIT = re.compile(r"才能|才会|都[会去在要]|一般|平时|通常|经常|总是|基本都?|常常")
_MONTH_DAY = re.compile(_NUM + r"月" + _NUM + r"[日号]")
_DAY_ONLY = re.compile(
    r"(?<!每)(?<!每个)(?<!每月)(下个?月|这个?月|本月)?" + _NUM + r"[日号](?![线楼门床房位桌口机厅车院馆码])"
)
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


def _in_month(today: date, months: int, day_number: int) -> date | None:
    """That day of the month `months` after today's; None when that month has no such day."""
    year, month = _add_months(today, months)
    return _safe_date(year, month, day_number)


def _month_day(today: date, month: int, day_number: int) -> date | None:
    """That day this year, or next year when it is more than 60 days past (1月5号 said in December)."""
    candidate = _safe_date(today.year, month, day_number)
    if candidate is not None and candidate < today - timedelta(days=60):
        candidate = _safe_date(today.year + 1, month, day_number)
    return candidate


def _month_edge(today: date, months: int, *, end: bool) -> date:
    """The last (or first) day of the month `months` after today's."""
    year, month = _add_months(today, months)
    return date(year, month, calendar.monthrange(year, month)[1] if end else 1)


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
        if prefix or not _HABIT.search(text):
            found.append((m.start(), day))
    if m := _MONTH_DAY.search(text):
        if (candidate := _month_day(today, _number(m.group(1)), _number(m.group(2)))) is not None:
            found.append((m.start(), candidate))
    elif m := _DAY_ONLY.search(text):
        months = 1 if (m.group(1) or "").startswith("下") else 0
        day_number = _number(m.group(2))
        if not m.group(1) and day_number < today.day:
            months = 1  # 5号 said on the 20th is next month's
        if (candidate := _in_month(today, months, day_number)) is not None:
            found.append((m.start(), candidate))
    if m := _MONTH_EDGE.search(text):
        if m.group(1) or m.group(2).startswith("月"):
            months = 1 if (m.group(1) or "").startswith("下") else 0
            found.append((m.start(), _month_edge(today, months, end=m.group(2) in ("月底", "月末", "底"))))
    found += _english_dates(text, today)
    if not found:
        return None
    return min(found, key=lambda item: item[0])[1]


# --- English ---

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name} | {
    name.lower(): i for i, name in enumerate(calendar.month_abbr) if name
}
_EN_MONTH = r"(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_EN_ORDINAL = r"(\d{1,2})(?:st|nd|rd|th)?"
_EN_WEEKDAYS = [name.lower() for name in calendar.day_name]
_EN_COUNTS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "ten": 10}
_EN_OFFSETS = {"the day after tomorrow": 2, "tomorrow": 1, "tonight": 0, "today": 0, "yesterday": -1}

_EN_RELATIVE = re.compile(r"\b(" + "|".join(_EN_OFFSETS) + r")\b", re.IGNORECASE)
_EN_WEEKDAY = re.compile(
    r"(?<!every )(?<!each )\b(?:(next|this|last|coming) )?(" + "|".join(_EN_WEEKDAYS) + r")\b(?!s\b)",
    re.IGNORECASE,
)
_EN_MONTH_DAY = re.compile(
    r"\b" + _EN_MONTH + r" " + _EN_ORDINAL + r"\b|\bthe " + _EN_ORDINAL + r" of " + _EN_MONTH, re.IGNORECASE
)
# told as done: a bare weekday in it is the last one, not the next
_EN_PAST = re.compile(
    r"\b(?:did|went|was|were|had|met|saw|spent|came|ran|rode|drove|flew|ate|(?:i|we)\s+\w+ed)\b", re.IGNORECASE
)
_EN_DAY_ONLY = re.compile(r"\b(?:on|to|until|till) the (\d{1,2})(?:st|nd|rd|th)\b", re.IGNORECASE)
_EN_MONTH_EDGE = re.compile(r"\b(?:the )?(end|start|beginning) of (?:the|this|next) month\b", re.IGNORECASE)
_EN_IN_SOME = re.compile(r"\bin (\d{1,2}|" + "|".join(_EN_COUNTS) + r") (day|week)s?\b(?! ago)", re.IGNORECASE)


def _english_dates(text: str, today: date) -> list[tuple[int, date]]:
    """(where in the text, the day) of each English date expression found."""
    found: list[tuple[int, date]] = []
    if m := _EN_RELATIVE.search(text):
        found.append((m.start(), today + timedelta(days=_EN_OFFSETS[m.group(1).lower()])))
    if m := _EN_WEEKDAY.search(text):
        prefix, weekday = (m.group(1) or "").lower(), _EN_WEEKDAYS.index(m.group(2).lower())
        monday = today - timedelta(days=today.weekday())
        if prefix in ("next", "last"):  # as 下周二 / 上周二: that day of the next or the last week
            day = monday + timedelta(weeks=1 if prefix == "next" else -1, days=weekday)
        elif not prefix and _EN_PAST.search(text):  # "we did a long ride on Saturday": the last one
            day = today - timedelta(days=(today.weekday() - weekday) % 7)
        else:  # (this / coming) Tuesday: the next one from today
            day = today + timedelta(days=(weekday - today.weekday()) % 7)
        found.append((m.start(), day))
    if m := _EN_MONTH_DAY.search(text):
        month_name, day_text = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        if (candidate := _month_day(today, _MONTHS[month_name.lower()], int(day_text))) is not None:
            found.append((m.start(), candidate))
    elif m := _EN_DAY_ONLY.search(text):
        day_number = int(m.group(1))  # "on the 5th" said on the 20th is next month's
        if (candidate := _in_month(today, 1 if day_number < today.day else 0, day_number)) is not None:
            found.append((m.start(), candidate))
    if m := _EN_MONTH_EDGE.search(text):
        months = 1 if "next" in m.group(0).lower() else 0
        found.append((m.start(), _month_edge(today, months, end=m.group(1).lower() == "end")))
    if m := _EN_IN_SOME.search(text):
        count = int(m.group(1)) if m.group(1).isdigit() else _EN_COUNTS[m.group(1).lower()]
        found.append((m.start(), today + timedelta(days=count * (7 if m.group(2).lower() == "week" else 1))))
    return found
