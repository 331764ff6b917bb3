"""Literal text every match of a JavaScript pattern must contain: a cheap test that lets a run skip
texts the pattern cannot match (`(.*?</think>)` costs O(n²) on a text without `</think>`).

The analysis is conservative: when unsure, a piece of the pattern requires nothing, so the answer
can only be weaker (fewer texts skipped), never wrong. `required_literals` returns alternatives — a
match contains at least one of them — or None when nothing useful is known.
"""

from __future__ import annotations

MIN_LITERAL = 3
_QUANTIFIER_CHARS = "*+?{"
_CLASS_ESCAPES = set("dDwWsSbBpPkcxu0123456789")


class _Unsupported(Exception):
    pass


def required_literals(pattern: str, flags: str) -> tuple[str, ...] | None:
    """Alternative literals a match must contain (each at least `MIN_LITERAL` long), or None."""
    try:
        parser = _Parser(pattern, ascii_only="i" in flags)
        found = parser.alternation()
        if parser.pos != len(pattern):
            return None
    except (_Unsupported, IndexError):
        return None
    if found is None or any(len(literal) < MIN_LITERAL and literal.isascii() for literal in found):
        return None  # a short ASCII literal is in nearly every text: not worth testing
    return tuple(sorted(set(found)))


class _Parser:
    def __init__(self, pattern: str, *, ascii_only: bool) -> None:
        self.src = pattern
        self.pos = 0
        # Case-insensitive matching of non-ASCII letters has engine-specific rules: leave them out.
        self.ascii_only = ascii_only

    def alternation(self) -> tuple[str, ...] | None:
        options = [self.sequence()]
        while self.pos < len(self.src) and self.src[self.pos] == "|":
            self.pos += 1
            options.append(self.sequence())
        if any(option is None for option in options):
            return None
        return tuple(literal for option in options for literal in option)  # type: ignore[union-attr]

    def sequence(self) -> tuple[str, ...] | None:
        """The best requirement among the mandatory pieces of a sequence."""
        candidates: list[tuple[str, ...]] = []
        run = ""
        while self.pos < len(self.src) and self.src[self.pos] not in "|)":
            char, group = self.atom()
            optional, repeats = self.quantifier()
            if char is not None and not optional:
                run += char
                if repeats:  # `ab+` still contains "ab", but what follows is not adjacent
                    candidates.append((run,))
                    run = ""
                continue
            if run:
                candidates.append((run,))
                run = ""
            if group is not None and not optional:
                candidates.append(group)
        if run:
            candidates.append((run,))
        if not candidates:
            return None
        return max(candidates, key=lambda option: min(len(literal) for literal in option))

    def atom(self) -> tuple[str | None, tuple[str, ...] | None]:
        """(a literal character, or a group's requirement); both None for anything else."""
        char = self.src[self.pos]
        self.pos += 1
        if char == "\\":
            return self.escape(), None
        if char == "[":
            self.skip_class()
            return None, None
        if char == "(":
            return None, self.group()
        if char in ".^$":
            return None, None
        if char in "*+?":
            raise _Unsupported  # a quantifier with nothing before it: let the engine judge
        if char == "{" and self.looks_like_quantifier(self.pos - 1):
            raise _Unsupported
        return self.literal(char), None

    def literal(self, char: str) -> str | None:
        if self.ascii_only and not char.isascii():
            return None
        return char

    def escape(self) -> str | None:
        char = self.src[self.pos]
        self.pos += 1
        if char in _CLASS_ESCAPES or char.isalnum():
            if char == "k" and self.pos < len(self.src) and self.src[self.pos] == "<":
                self.pos = self.src.index(">", self.pos) + 1
            elif char in "pP" and self.pos < len(self.src) and self.src[self.pos] == "{":
                self.pos = self.src.index("}", self.pos) + 1
            elif char == "x":
                self.pos += 2
            elif char == "u":
                if self.pos < len(self.src) and self.src[self.pos] == "{":
                    self.pos = self.src.index("}", self.pos) + 1
                else:
                    self.pos += 4
            elif char == "c":
                self.pos += 1
            return None
        return self.literal(char)

    def skip_class(self) -> None:
        while self.src[self.pos] != "]":
            self.pos += 2 if self.src[self.pos] == "\\" else 1
        self.pos += 1

    def group(self) -> tuple[str, ...] | None:
        lookaround = False
        if self.src.startswith("?:", self.pos):
            self.pos += 2
        elif self.src.startswith(("?=", "?!"), self.pos):
            self.pos += 2
            lookaround = True
        elif self.src.startswith(("?<=", "?<!"), self.pos):
            self.pos += 3
            lookaround = True
        elif self.src.startswith("?<", self.pos):
            self.pos = self.src.index(">", self.pos) + 1
        elif self.src.startswith("?", self.pos):
            raise _Unsupported  # modifiers such as (?i:…): let the engine judge
        inner = self.alternation()
        if self.src[self.pos] != ")":
            raise _Unsupported
        self.pos += 1
        return None if lookaround else inner

    def quantifier(self) -> tuple[bool, bool]:
        """(the atom may be absent, the atom may repeat)."""
        if self.pos >= len(self.src):
            return False, False
        char = self.src[self.pos]
        if char in "*?":
            self.pos += 1
            self.lazy()
            return True, char == "*"
        if char == "+":
            self.pos += 1
            self.lazy()
            return False, True
        if char == "{" and self.looks_like_quantifier(self.pos):
            close = self.src.index("}", self.pos)
            low, _, high = self.src[self.pos + 1 : close].partition(",")
            self.pos = close + 1
            self.lazy()
            return int(low) == 0, high != low or "," in self.src[self.pos - 1 - len(high) - 1 : self.pos]
        return False, False

    def lazy(self) -> None:
        if self.pos < len(self.src) and self.src[self.pos] == "?":
            self.pos += 1

    def looks_like_quantifier(self, at: int) -> bool:
        close = self.src.find("}", at)
        if close < 0:
            return False
        body = self.src[at + 1 : close]
        low, comma, high = body.partition(",")
        return low.isdigit() and (not comma or high == "" or high.isdigit())
