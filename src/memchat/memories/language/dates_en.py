"""The same in English: "I'm getting LASIK on the 8th", said on Thursday 2026-12-03, is an event on
2026-12-08. Resolved against the message's day: today / tonight / tomorrow / yesterday, the day after
tomorrow, (this / next / last) Tuesday, December 20 / the 20th of December, on the 20th, the end of
the month / next month's start, in three days / in two weeks. A weekday said as a habit (every Tuesday,
on Tuesdays) is no date. Pure; `dates.resolve_event_date` takes the first expression in either language.
"""

import calendar
import re
from datetime import date, timedelta

_MONTHS = {name: i for i, name in enumerate(calendar.month_name) if name} | {
    name: i for i, name in enumerate(calendar.month_abbr) if name
}
_MONTH = r"(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_ORDINAL = r"(\d{1,2})(?:st|nd|rd|th)?"
_WEEKDAY_NAMES = [name.lower() for name in calendar.day_name]
_COUNTS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "ten": 10}

_RELATIVE = re.compile(r"\b(the day after tomorrow|tomorrow|tonight|today|yesterday)\b", re.IGNORECASE)
_WEEKDAY = re.compile(
    r"(?<!every )(?<!each )\b(?:(next|this|last|coming) )?(" + "|".join(_WEEKDAY_NAMES) + r")\b(?!s\b)",
    re.IGNORECASE,
)
_MONTH_DAY = re.compile(r"\b" + _MONTH + r" " + _ORDINAL + r"\b|\bthe " + _ORDINAL + r" of " + _MONTH, re.IGNORECASE)
_DAY_ONLY = re.compile(r"\bon the (\d{1,2})(?:st|nd|rd|th)\b", re.IGNORECASE)
_MONTH_EDGE = re.compile(r"\b(?:the )?(end|start|beginning) of (?:the|this|next) month\b", re.IGNORECASE)
_IN_SOME = re.compile(r"\bin (\d{1,2}|" + "|".join(_COUNTS) + r") (day|week)s?\b(?! ago)", re.IGNORECASE)
_OFFSETS = {"the day after tomorrow": 2, "tomorrow": 1, "tonight": 0, "today": 0, "yesterday": -1}


def _month_date(today: date, month: int, day_number: int) -> date | None:
    for year in (today.year, today.year + 1):
        try:
            candidate = date(year, month, day_number)
        except ValueError:
            return None
        if candidate >= today - timedelta(days=60):  # January 5 said in December is next year's
            return candidate
    return None


def english_dates(text: str, today: date) -> list[tuple[int, date]]:
    """(where in the text, the day) of each English date expression found."""
    found: list[tuple[int, date]] = []
    if m := _RELATIVE.search(text):
        found.append((m.start(), today + timedelta(days=_OFFSETS[m.group(1).lower()])))
    if m := _WEEKDAY.search(text):
        prefix, weekday = (m.group(1) or "").lower(), _WEEKDAY_NAMES.index(m.group(2).lower())
        monday = today - timedelta(days=today.weekday())
        if prefix in ("next", "last"):  # as 下周二 / 上周二: that day of the next or the last week
            day = monday + timedelta(weeks=1 if prefix == "next" else -1, days=weekday)
        else:  # (this / coming) Tuesday: the next one from today
            day = today + timedelta(days=(weekday - today.weekday()) % 7)
        found.append((m.start(), day))
    if m := _MONTH_DAY.search(text):
        month_name, day_text = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        month = _MONTHS.get(month_name.capitalize()) or _MONTHS.get(month_name.title())
        if month is not None and (candidate := _month_date(today, month, int(day_text))) is not None:
            found.append((m.start(), candidate))
    elif m := _DAY_ONLY.search(text):
        day_number = int(m.group(1))
        months = 1 if day_number < today.day else 0  # "on the 5th" said on the 20th is next month's
        year, month = (today.year + (today.month + months - 1) // 12, (today.month + months - 1) % 12 + 1)
        if day_number <= calendar.monthrange(year, month)[1]:
            found.append((m.start(), date(year, month, day_number)))
    if m := _MONTH_EDGE.search(text):
        months = 1 if "next" in m.group(0).lower() else 0
        year, month = (today.year + (today.month + months - 1) // 12, (today.month + months - 1) % 12 + 1)
        last = calendar.monthrange(year, month)[1]
        found.append((m.start(), date(year, month, last if m.group(1).lower() == "end" else 1)))
    if m := _IN_SOME.search(text):
        count = int(m.group(1)) if m.group(1).isdigit() else _COUNTS[m.group(1).lower()]
        found.append((m.start(), today + timedelta(days=count * (7 if m.group(2).lower() == "week" else 1))))
    return found
