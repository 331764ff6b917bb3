"""The shared cache's serializer: MessagePack, never pickle (issue 35).

Django's Redis cache unpickles what it reads, so a value planted in Redis would run code in the web
process. This codec writes only data: None, booleans, numbers, text, bytes, lists and dicts as
MessagePack, plus tagged tuples, sets, dates, enums and dataclasses. Reading builds a dataclass or
an enum only when its class is one of ours (a module under `ALLOWED_MODULES`) and really is a
dataclass or an enum; anything else is refused (`CacheDecodeError`, which the resilient cache turns
into a miss). Building one of our frozen dataclasses runs nothing but its constructor.

Integers are stored as plain Redis integers, as Django's own serializer does, so INCR keeps working.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import sys
from datetime import date, datetime, timedelta
from typing import Any

import msgpack

ALLOWED_MODULES = (
    "engine",
    "assembly",
    "cards",
    "characters",
    "conversations",
    "lorebooks",
    "memory",
    "presets",
    "regex_scripts",
    "servers",
)

_TUPLE, _DATACLASS, _ENUM, _FROZENSET, _SET, _DATETIME, _DATE, _TIMEDELTA = range(1, 9)


class CacheDecodeError(ValueError):
    """A cached value this codec did not write (or refuses to build)."""


def _name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _pack(value: Any) -> bytes:
    return msgpack.packb(value, default=_encode, use_bin_type=True, strict_types=True)


def _encode(value: Any) -> msgpack.ExtType:
    if isinstance(value, tuple) and not dataclasses.is_dataclass(value):
        return msgpack.ExtType(_TUPLE, _pack(list(value)))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = [getattr(value, f.name) for f in dataclasses.fields(value) if f.init]
        return msgpack.ExtType(_DATACLASS, _pack([_name(type(value)), fields]))
    if isinstance(value, enum.Enum):
        return msgpack.ExtType(_ENUM, _pack([_name(type(value)), value.value]))
    if isinstance(value, frozenset):
        return msgpack.ExtType(_FROZENSET, _pack(list(value)))
    if isinstance(value, set):
        return msgpack.ExtType(_SET, _pack(list(value)))
    if isinstance(value, datetime):
        return msgpack.ExtType(_DATETIME, value.isoformat().encode())
    if isinstance(value, date):
        return msgpack.ExtType(_DATE, value.isoformat().encode())
    if isinstance(value, timedelta):
        return msgpack.ExtType(_TIMEDELTA, _pack([value.days, value.seconds, value.microseconds]))
    raise TypeError(f"the shared cache stores data only, not {type(value).__qualname__}")


def _unpack(data: bytes) -> Any:
    return msgpack.unpackb(data, ext_hook=_decode, raw=False, strict_map_key=False, use_list=True)


def _class(name: str, kind: str) -> type:
    module_name, _, qualname = name.partition(":")
    if module_name.split(".")[0] not in ALLOWED_MODULES or not qualname:
        raise CacheDecodeError(f"the cached value names a class outside the app: {name}")
    module = sys.modules.get(module_name) or importlib.import_module(module_name)
    found: Any = module
    for part in qualname.split("."):
        found = getattr(found, part, None)
    ok = isinstance(found, type) and (
        dataclasses.is_dataclass(found) if kind == "dataclass" else issubclass(found, enum.Enum)
    )
    if not ok:
        raise CacheDecodeError(f"the cached value names something that is not a {kind}: {name}")
    return found


def _decode(code: int, data: bytes) -> Any:
    if code == _TUPLE:
        return tuple(_unpack(data))
    if code == _DATACLASS:
        name, values = _unpack(data)
        return _class(name, "dataclass")(*values)
    if code == _ENUM:
        name, value = _unpack(data)
        return _class(name, "enum")(value)
    if code == _FROZENSET:
        return frozenset(_unpack(data))
    if code == _SET:
        return set(_unpack(data))
    if code == _DATETIME:
        return datetime.fromisoformat(data.decode())
    if code == _DATE:
        return date.fromisoformat(data.decode())
    if code == _TIMEDELTA:
        days, seconds, micro = _unpack(data)
        return timedelta(days=days, seconds=seconds, microseconds=micro)
    raise CacheDecodeError(f"unknown tag {code} in a cached value")


MAGIC = b"\xc1tk"  # 0xc1 is never the first byte of MessagePack nor of a pickle


def dumps(value: Any) -> bytes | int:
    if type(value) is int:
        return value
    return MAGIC + _pack(value)


def loads(data: bytes | int) -> Any:
    if isinstance(data, int):
        return data
    if not data.startswith(MAGIC):
        try:
            return int(data)
        except ValueError:
            raise CacheDecodeError("a cached value this app did not write (not its format)") from None
    try:
        return _unpack(data[len(MAGIC) :])
    except CacheDecodeError:
        raise
    except Exception as exc:  # damaged data, a constructor refusing its fields, …
        raise CacheDecodeError(f"a cached value could not be read: {exc}") from None


class MsgpackSerializer:
    """`CACHES["default"]["OPTIONS"]["serializer"]` for Django's Redis cache."""

    def dumps(self, value: Any) -> bytes | int:
        return dumps(value)

    def loads(self, data: bytes | int) -> Any:
        return loads(data)
