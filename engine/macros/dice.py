"""Seeded draws: `{{random}}`/`{{pick}}` choices and `{{roll}}` dice."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from engine.bounded import MiB, text_cache

MAX_DICE = 100
MAX_SIDES = 1000

_ROLL = re.compile(r"\s*(\d*)\s*(?:[dD]\s*(\d+))?\s*(?:([+-])\s*(\d+))?\s*")


_MASK = (1 << 64) - 1


class Stream:
    """A small deterministic generator (SplitMix64): cheap to create, so every draw can have its own."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def next64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """A number in [0, n) (n is small, so the multiply-shift bias is negligible)."""
        return (self.next64() * n) >> 64


def _mix(value: int) -> int:
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & _MASK
    return value ^ (value >> 31)


def stream_for(base: int, *numbers: int) -> Stream:
    """Return a generator for `base` (from `base_seed`) and small integers (kind, position, occurrence)."""
    state = base
    for number in numbers:
        state = _mix(((state ^ number) + 0x9E3779B97F4A7C15) & _MASK)
    return Stream(state)


def draw_below(base: int, kind: int, position: int, occurrence: int, n: int) -> int:
    """`stream_for(base, kind, position, occurrence).below(n)` in one call (the same number): a
    `{{random}}` draw, which a macro-heavy preset makes dozens of times per render."""
    state = ((base ^ kind) + 0x9E3779B97F4A7C15) & _MASK
    state = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    state = ((state ^ (state >> 27)) * 0x94D049BB133111EB) & _MASK
    state = (((state ^ (state >> 31)) ^ position) + 0x9E3779B97F4A7C15) & _MASK
    state = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    state = ((state ^ (state >> 27)) * 0x94D049BB133111EB) & _MASK
    state = (((state ^ (state >> 31)) ^ occurrence) + 0x9E3779B97F4A7C15) & _MASK
    state = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    state = ((state ^ (state >> 27)) * 0x94D049BB133111EB) & _MASK
    state = ((state ^ (state >> 31)) + 0x9E3779B97F4A7C15) & _MASK  # the stream's first step
    state = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    state = ((state ^ (state >> 27)) * 0x94D049BB133111EB) & _MASK
    return ((state ^ (state >> 31)) * n) >> 64


@text_cache(max_entries=4096, max_bytes=4 * MiB)
def base_seed(*seed_parts: object) -> int:
    """A 64-bit hash of `seed_parts`, stable across processes (unlike `hash`)."""
    digest = hashlib.blake2b("|".join(map(str, seed_parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def draw_seed(seed: int, key: str) -> int:
    """`base_seed("draw", seed, key)` without the process-wide cache: a segment's draw seed, which a
    fresh seed per call makes anew on every assembly (a cache would only add its bookkeeping)."""
    digest = hashlib.blake2b(f"draw|{seed}|{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def rng_for(*seed_parts: object) -> Stream:
    """Return a generator determined only by `seed_parts` (same parts, same draws, in any process)."""
    return Stream(base_seed(*seed_parts))


def split_choices(args: list[str]) -> list[str]:
    """Return the trimmed items of a random/pick argument list.

    Several `::`-separated arguments are the items; a single argument is split on `::` when it holds
    one, else on commas (`\\,` is a literal comma).
    """
    if len(args) == 1:
        text = args[0]
        if "::" in text:
            args = text.split("::")
        else:
            args = [item.replace("\x00", ",") for item in text.replace("\\,", "\x00").split(",")]
    return [item.strip() for item in args]


def choose(items: list[str], *seed_parts: object) -> str:
    """Return one of `items` drawn with the generator for `seed_parts` ("" for no items)."""
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return items[rng_for(*seed_parts).below(len(items))]


@dataclass(frozen=True, slots=True)
class Roll:
    """A parsed dice formula; `problem` is a warning sentence when it was clamped."""

    dice: int
    sides: int
    modifier: int
    problem: str = ""


@text_cache(max_entries=1024, max_bytes=1 * MiB)
def parse_roll(formula: str) -> Roll | None:
    """Parse `XdY`, `dY`, `XdY+M`, `XdY-M` or bare `N` (= 1dN); None when it is not a formula.

    More than MAX_DICE dice or MAX_SIDES sides are clamped, with `problem` saying so.
    """
    match = _ROLL.fullmatch(formula)
    if match is None:
        return None
    count, sides, sign, modifier = match.groups()
    if sides is None:
        if not count:
            return None
        count, sides = "1", count
    dice = int(count) if count else 1
    faces = int(sides)
    if dice < 1 or faces < 1:
        return None
    problems = []
    if dice > MAX_DICE:
        problems.append(f"more than {MAX_DICE} dice")
        dice = MAX_DICE
    if faces > MAX_SIDES:
        problems.append(f"more than {MAX_SIDES} sides")
        faces = MAX_SIDES
    shift = int(modifier) if modifier else 0
    if sign == "-":
        shift = -shift
    problem = ""
    if problems:
        problem = f"The roll {formula.strip()!r} asks for {' and '.join(problems)}; it was clamped to {dice}d{faces}."
    return Roll(dice, faces, shift, problem)


def roll_each(spec: Roll, rng: Stream) -> list[int]:
    """Each die drawn from `rng`, in order: the draws `roll` sums (the modifier not added)."""
    return [rng.below(spec.sides) + 1 for _ in range(spec.dice)]


def roll(spec: Roll, rng: Stream) -> int:
    """Return the sum of the dice drawn from `rng`, plus the modifier."""
    if spec.dice == 1:  # most rolls in real presets
        return rng.below(spec.sides) + 1 + spec.modifier
    return sum(rng.below(spec.sides) + 1 for _ in range(spec.dice)) + spec.modifier
