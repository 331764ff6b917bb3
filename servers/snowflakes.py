"""Discord ids (snowflakes) as the bot's API reads and writes them.

Discord ids pass 2^53, the last whole number a JavaScript number holds exactly, so discord.js hands
them out as strings. The API takes either spelling (a JSON string of digits or a JSON number) up to
the 64-bit range the database keeps, and always answers with strings.
"""

from __future__ import annotations

from typing import Any, Literal, overload

from .api_auth import ApiError

SNOWFLAKE_MAX = 2**63 - 1


@overload
def read_snowflake(body: dict[str, Any], field: str, *, required: Literal[True] = ...) -> int: ...
@overload
def read_snowflake(body: dict[str, Any], field: str, *, required: bool) -> int | None: ...
def read_snowflake(body: dict[str, Any], field: str, *, required: bool = True) -> int | None:
    """The id under `field` as an int; None when absent and optional; ApiError (400) naming the field."""
    value = body.get(field)
    if value is None or value == "":
        if required:
            raise ApiError(f"`{field}` is required (a Discord id).")
        return None
    parsed = snowflake_or_none(value)
    if parsed is None:
        raise ApiError(f"`{field}` must be a Discord id: a positive whole number, as a string or a number.")
    return parsed


def snowflake_or_none(value: Any) -> int | None:
    """`value` as a Discord id, or None when it is not one (booleans, floats, signs and spaces refused)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 20:
        number = int(value)
    else:
        return None
    return number if 0 < number <= SNOWFLAKE_MAX else None


def snowflake_text(value: int | None) -> str | None:
    """An id as the API answers it: a string (None stays None)."""
    return None if value is None else str(value)
