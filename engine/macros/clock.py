"""The clock macros: {{time}} {{date}} {{weekday}} {{isotime}} {{isodate}} {{datetimeformat}} {{idle_duration}}."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_TOKENS = re.compile(r"\[[^\]]*\]|YYYY|YY|MMMM|MMM|MM|M|DD|D|dddd|ddd|HH|H|hh|h|mm|ss|A")


def local_now(now: datetime | None, timezone: str) -> tuple[datetime, str]:
    """Return `now` (or the real time) in `timezone`, plus a warning when the zone is unknown."""
    moment = now or datetime.now(UTC)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        zone = ZoneInfo(timezone or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return moment.astimezone(UTC), f"The time zone {timezone!r} is unknown; UTC was used."
    return moment.astimezone(zone), ""


def _hour12(moment: datetime) -> int:
    return moment.hour % 12 or 12


_FORMATS: dict[str, Callable[[datetime], str]] = {
    "YYYY": lambda moment: f"{moment.year:04d}",
    "YY": lambda moment: f"{moment.year % 100:02d}",
    "MMMM": lambda moment: _MONTHS[moment.month - 1],
    "MMM": lambda moment: _MONTHS[moment.month - 1][:3],
    "MM": lambda moment: f"{moment.month:02d}",
    "M": lambda moment: str(moment.month),
    "DD": lambda moment: f"{moment.day:02d}",
    "D": lambda moment: str(moment.day),
    "dddd": lambda moment: _DAYS[moment.weekday()],
    "ddd": lambda moment: _DAYS[moment.weekday()][:3],
    "HH": lambda moment: f"{moment.hour:02d}",
    "H": lambda moment: str(moment.hour),
    "hh": lambda moment: f"{_hour12(moment):02d}",
    "h": lambda moment: str(_hour12(moment)),
    "mm": lambda moment: f"{moment.minute:02d}",
    "ss": lambda moment: f"{moment.second:02d}",
    "A": lambda moment: "AM" if moment.hour < 12 else "PM",
}


def format_moment(moment: datetime, pattern: str) -> str:
    """Format `moment` with moment.js-style tokens (YYYY YY MMMM MMM MM M DD D dddd ddd HH H hh h mm ss A);
    `[text]` is literal."""

    def token(match: re.Match[str]) -> str:
        tok = match.group(0)
        if tok.startswith("["):
            return tok[1:-1]
        return _FORMATS[tok](moment)  # only the token asked for is worked out

    return _TOKENS.sub(token, pattern)


def clock_macro(name: str, moment: datetime) -> str:
    """Return {{time}} (`8:07 PM`), {{date}} (`November 21, 2026`), {{weekday}}, {{isotime}} or {{isodate}}."""
    if name == "time":
        return format_moment(moment, "h:mm A")
    if name == "date":
        return format_moment(moment, "MMMM D, YYYY")
    if name == "weekday":
        return format_moment(moment, "dddd")
    if name == "isotime":
        return format_moment(moment, "HH:mm")
    return format_moment(moment, "YYYY-MM-DD")


def idle_duration(times: tuple[datetime, ...]) -> str:
    """Return the time between the two most recent user messages in words ("5 minutes"), as moment.js
    humanizes it; "just now" with fewer than two messages."""
    if len(times) < 2:
        return "just now"
    previous, latest = sorted(times)[-2:]
    return humanize(abs((latest - previous).total_seconds()))


def time_diff(left: str, right: str) -> str:
    """`{{timeDiff::left::right}}`: the time from `right` to `left` in words with its direction ("2 days
    ago", "in an hour"), as moment.js humanizes it; "Invalid date" when either is not a date."""
    try:
        a, b = (datetime.fromisoformat(text.strip().replace(" ", "T", 1)) for text in (left, right))
        if (a.tzinfo is None) != (b.tzinfo is None):
            a, b = a.replace(tzinfo=None), b.replace(tzinfo=None)
        seconds = (a - b).total_seconds()
    except ValueError:
        return "Invalid date"
    words = humanize(abs(seconds))
    return f"{words} ago" if seconds < 0 else f"in {words}"


def humanize(seconds: float) -> str:
    """A duration in words, with moment.js's thresholds and rounding ("a few seconds" … "3 years")."""

    def round_half_up(value: float) -> int:  # JavaScript's Math.round, not banker's rounding
        return int(value + 0.5)

    minutes, hours, days = seconds / 60, seconds / 3600, seconds / 86400
    if seconds < 45:
        return "a few seconds"
    if seconds < 90:
        return "a minute"
    if minutes < 45:
        return f"{round_half_up(minutes)} minutes"
    if minutes < 90:
        return "an hour"
    if hours < 22:
        return f"{round_half_up(hours)} hours"
    if hours < 36:
        return "a day"
    if days < 26:
        return f"{round_half_up(days)} days"
    if days < 45:
        return "a month"
    if days < 320:
        return f"{round_half_up(days / 30.4)} months"
    if days < 548:
        return "a year"
    return f"{round_half_up(days / 365)} years"
