"""Variable values as SillyTavern sees them: text, numbers, JSON collections; printed as JavaScript prints them."""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any, TypeAlias

# A JSON object or array held in a variable (as `as_collection` reads it).
JsonCollection: TypeAlias = dict[str, Any] | list[Any]

_JS_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_JS_INTEGER_PREFIXED = re.compile(r"0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+")


def js_number(value: Any) -> float | int | None:
    """Return `Number(value)` as JavaScript computes it, or None where JavaScript gives NaN.

    Text is trimmed; empty text is 0; `Infinity`, hex/octal/binary literals and exponents are accepted.
    """
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return None if isinstance(value, float) and math.isnan(value) else value
    if value is None:
        return 0
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text:
        return 0
    if _JS_DECIMAL.fullmatch(text):
        number = float(text)
        return int(number) if number.is_integer() and abs(number) < 2**53 else number
    if _JS_INTEGER_PREFIXED.fullmatch(text):
        return int(text, 0)
    if text in ("Infinity", "+Infinity"):
        return math.inf
    if text == "-Infinity":
        return -math.inf
    return None


def js_number_text(number: float | int) -> str:
    """Print a number as JavaScript's String(number) would (`3`, `2.5`, `1e+21`, `1e-7`)."""
    if isinstance(number, bool):
        number = int(number)
    if isinstance(number, int):
        if abs(number) < 10**21:
            return str(number)
        number = float(number)
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number == 0:
        return "0"
    if number.is_integer() and abs(number) < 2**53:
        return str(int(number))
    shortest = repr(number)  # Python and JavaScript both print the shortest round-trip digits
    if 1e-6 <= abs(number) < 1e21:  # JavaScript switches to exponents outside this range
        return format(Decimal(shortest), "f")
    mantissa, _, exponent = shortest.partition("e")
    if not exponent:
        mantissa, exponent = f"{Decimal(shortest):e}".split("e")
    exp = int(exponent)
    return f"{mantissa}e{'+' if exp > 0 else '-'}{abs(exp)}"


def to_text(value: Any) -> str:
    """Render a variable value as `{{getvar}}` prints it (collections as compact JSON)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number_text(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def as_collection(value: Any) -> JsonCollection | None:
    """Return `value` as a JSON object/array (parsing text that holds one), else None."""
    if isinstance(value, dict | list):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "[") and text[-1:] in ("}", "]"):
            try:
                parsed = json.loads(text)
            except ValueError:
                return None
            if isinstance(parsed, dict | list):
                return parsed
    return None


def tidy_number(number: float | int) -> float | int:
    """A whole float as an int, so it prints and compares as JavaScript's number would."""
    if isinstance(number, float) and number.is_integer() and abs(number) < 2**53:
        return int(number)
    return number


def number_of(value: Any) -> float | int | None:
    """A variable value as a number for arithmetic, or None (collections and booleans never count)."""
    if isinstance(value, dict | list | bool):
        return None
    return js_number(value)


def added(current: Any, addition: Any) -> Any:
    """`addvar` on a value that is not an array (docs/macros.md#variables), as SillyTavern 1.18's add: two
    numbers add, anything else appends as text. The current value is read as SillyTavern reads a variable:
    text that is a number is that number (`5.50` appends as `5.5`), and a missing, empty or zero value counts
    as 0, which appends as nothing.
    """
    if isinstance(current, str) and current.strip():
        number = js_number(current)
        current = number if number is not None else current
    elif current is None or current == "":
        current = 0
    base, increment = number_of(current), number_of(addition)
    if base is None or increment is None:
        zero = isinstance(current, int | float) and not isinstance(current, bool) and current == 0
        return ("" if zero else to_text(current)) + to_text(addition)
    return tidy_number(base + increment)


def stepped(current: Any, delta: int) -> float | int | None:
    """`incvar`/`decvar`: the value moved by `delta`; missing or empty counts as 0; None when it is not a number."""
    number = number_of(current)
    return None if number is None else tidy_number(number + delta)
