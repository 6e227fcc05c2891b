"""Dates read under a stated format, the same on every machine (pure Python, for the command's parser).

A release over time composes its periods in parallel only if a document's period is a fixed function of it;
:func:`time.strptime`'s month names follow the locale, so this module reads a few directives with English month
names and ASCII digits.
"""

from __future__ import annotations

import datetime as _dt
import re
from functools import lru_cache
from typing import Dict, Pattern, Tuple

#: month names read by ``%B`` and ``%b``: English, case-insensitive, whatever the locale
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
#: directive -> (the group it captures, its regular expression); ``%H``, ``%M``, ``%S`` are read and ignored
DIRECTIVES: Dict[str, Tuple[str, str]] = {
    "Y": ("year", "[0-9]{4}"),
    "y": ("year2", "[0-9]{2}"),
    "m": ("month", "[0-9]{1,2}"),
    "B": ("month_name", "|".join(MONTHS)),
    "b": ("month_abbr", "|".join(m[:3] for m in MONTHS)),
    "d": ("day", "[0-9]{1,2}"),
    "H": ("hour", "[0-9]{1,2}"),
    "M": ("minute", "[0-9]{1,2}"),
    "S": ("second", "[0-9]{1,2}"),
}


def check_date_format(date_format: str) -> str:
    """``date_format`` itself, after checking :func:`parse_date` can read it: a year (``%Y``, or ``%y`` as POSIX), a
    month (``%m``, ``%B`` or ``%b``), an optional ``%d``; each directive once; ``%%`` a literal ``%``.
    """
    _compiled(date_format)
    return date_format


def parse_date(text: str, date_format: str) -> _dt.date:
    """The date ``text`` states under ``date_format`` (the whole text; English month names in any case, ASCII digits);
    a ``ValueError`` otherwise, a day the month lacks included.

    >>> parse_date("14,May,2004", "%d,%B,%Y")
    datetime.date(2004, 5, 14)
    >>> parse_date("03/sep/99 12:00", "%d/%b/%y %H:%M")
    datetime.date(1999, 9, 3)
    """
    if not isinstance(text, str):
        raise ValueError(f"date {text!r} is not a string")
    match = _compiled(date_format).fullmatch(text)
    if match is None:
        raise ValueError(f"date {text!r} does not read as {date_format!r}")
    g = match.groupdict()  # the format's groups only, each matched (none is optional)
    short = int(g.get("year2", 0))
    year = int(g["year"]) if "year" in g else short + (1900 if short >= 69 else 2000)
    name = (g.get("month_name") or g.get("month_abbr") or "")[:3].lower()  # a full name's first three letters
    month = int(g["month"]) if "month" in g else [m[:3] for m in MONTHS].index(name) + 1
    day = int(g.get("day", 1))
    try:
        return _dt.date(year, month, day)
    except ValueError:
        raise ValueError(f"date {text!r} is not a calendar date") from None


@lru_cache(maxsize=32)
def _compiled(date_format: str) -> Pattern[str]:
    """The regular expression of ``date_format`` (:func:`check_date_format`)."""
    if not isinstance(date_format, str) or not date_format:
        raise ValueError(f"date_format must be a non-empty strptime-style format like '%d,%B,%Y', got {date_format!r}")
    parts, seen, i = [], set(), 0
    while i < len(date_format):
        char = date_format[i]
        if char != "%":
            parts.append(re.escape(char))
            i += 1
            continue
        directive = date_format[i + 1:i + 2]
        i += 2
        if directive == "%":
            parts.append("%")
            continue
        if directive not in DIRECTIVES:
            known = " ".join(f"%{d}" for d in DIRECTIVES)
            raise ValueError(f"date_format {date_format!r}: %{directive} is not read (the directives read are "
                             f"{known} and %%, month names in English)")
        group, pattern = DIRECTIVES[directive]
        if group in seen:
            raise ValueError(f"date_format {date_format!r}: %{directive} appears twice")
        seen.add(group)
        parts.append(f"(?P<{group}>{pattern})")
    _check_fields(date_format, seen)
    return re.compile("".join(parts), re.IGNORECASE | re.ASCII)


def _check_fields(date_format: str, seen: set) -> None:
    """Refuse a format that does not state one year and one month."""
    years, months = seen & {"year", "year2"}, seen & {"month", "month_name", "month_abbr"}
    if len(years) != 1 or len(months) != 1:
        raise ValueError(f"date_format {date_format!r} must state the year once (%Y or %y) and the month once "
                         "(%m, %B or %b)")
