"""SillyTavern regex script objects: their fields and defaults (docs/regex.md#scripts-and-their-engine), read
once and compiled once."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import IntEnum
from typing import Any

from engine.macros import has_angle_form

from ..errors import EngineError
from .find import parse_find_regex
from .js import JsRegex, RegexCompileError, Replacement, compile_js_regex
from .replacement import compile_replacement


class Placement(IntEnum):
    USER_INPUT = 1
    AI_OUTPUT = 2
    SLASH_COMMAND = 3
    WORLD_INFO = 5
    REASONING = 6


class SubstituteRegex(IntEnum):
    NONE = 0
    RAW = 1
    ESCAPED = 2


MAX_SCRIPT_TEXT = 100_000  # characters per field: a bound on what one upload can make us compile


class ScriptError(EngineError, ValueError):
    """A script object that cannot be read; `message` is one sentence."""


@dataclass(frozen=True, slots=True)
class RegexScript:
    """One script as SillyTavern stores it, with the defaults filled in and legacy placements mapped."""

    id: str
    name: str
    find_regex: str
    replace_string: str = ""
    trim_strings: tuple[str, ...] = ()
    placement: frozenset[int] = frozenset()
    disabled: bool = False
    markdown_only: bool = False
    prompt_only: bool = False
    run_on_edit: bool = False
    substitute_regex: int = SubstituteRegex.NONE
    min_depth: int | None = None
    max_depth: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The SillyTavern export shape (what an upload of it would read back as the same script)."""
        return {
            "id": self.id,
            "scriptName": self.name,
            "findRegex": self.find_regex,
            "replaceString": self.replace_string,
            "trimStrings": list(self.trim_strings),
            "placement": sorted(self.placement),
            "disabled": self.disabled,
            "markdownOnly": self.markdown_only,
            "promptOnly": self.prompt_only,
            "runOnEdit": self.run_on_edit,
            "substituteRegex": int(self.substitute_regex),
            "minDepth": self.min_depth,
            "maxDepth": self.max_depth,
        }

    @property
    def label(self) -> str:
        return self.name or self.id or self.find_regex[:40]

    def depth_allows(self, depth: int | None) -> bool:
        """Both bounds inclusive; no depth (a reply being cleaned, a non-@depth entry) passes."""
        if depth is None:
            return True
        if self.min_depth is not None and depth < self.min_depth:
            return False
        return not (self.max_depth is not None and depth > self.max_depth)


def parse_scripts(data: Any) -> list[RegexScript]:
    """A SillyTavern regex export (one script object or a list of them) → scripts, in order."""
    if isinstance(data, Mapping):
        return [parse_script(data)]
    if isinstance(data, list):
        scripts = []
        for position, item in enumerate(data, start=1):
            try:
                scripts.append(parse_script(item))
            except ScriptError as exc:
                raise ScriptError(f"Script {position}: {exc.message}") from None
        return scripts
    raise ScriptError("A regex export is a script object or a list of script objects.")


def parse_script(data: Any) -> RegexScript:
    """One script object → `RegexScript`; `ScriptError` when it is not a script."""
    if not isinstance(data, Mapping):
        raise ScriptError("A regex script is a JSON object.")
    find_regex = data.get("findRegex")
    if not isinstance(find_regex, str):
        raise ScriptError("A regex script needs a findRegex string.")
    find_regex = find_regex.replace("\x00", "")
    fields = {
        "findRegex": find_regex,
        "replaceString": _text(data.get("replaceString")),
        "scriptName": _text(data.get("scriptName")),
        "id": _text(data.get("id")),
    }
    trims = data.get("trimStrings") or []
    if not isinstance(trims, list):
        trims = []
    trims = [_text(trim) for trim in trims if isinstance(trim, str | int | float)]
    for label, value in [*fields.items(), *(("trimStrings", trim) for trim in trims)]:
        if len(value) > MAX_SCRIPT_TEXT:
            raise ScriptError(f"The {label} of a regex script is longer than {MAX_SCRIPT_TEXT:,} characters.")
    return RegexScript(
        id=fields["id"],
        name=fields["scriptName"],
        find_regex=find_regex,
        replace_string=fields["replaceString"],
        trim_strings=tuple(trims),
        placement=_placements(data.get("placement")),
        disabled=bool(data.get("disabled", False)),
        markdown_only=bool(data.get("markdownOnly", False)),
        prompt_only=bool(data.get("promptOnly", False)),
        run_on_edit=bool(data.get("runOnEdit", False)),
        substitute_regex=_substitute(data.get("substituteRegex")),
        min_depth=_depth(data.get("minDepth")),
        max_depth=_depth(data.get("maxDepth")),
    )


def _text(value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    return text.replace("\x00", "")  # the database cannot store NUL


def _placements(value: Any) -> frozenset[int]:
    if not isinstance(value, list):
        return frozenset()
    known = {int(p) for p in Placement}
    out: set[int] = set()
    for raw in value:
        if isinstance(raw, bool) or not isinstance(raw, int | float | str):
            continue
        try:
            number = int(raw)
        except ValueError:
            continue
        number = 3 if number == 4 else number  # legacy "markdown" placement; 0 is dropped
        if number in known:
            out.add(number)
    return frozenset(out)


def _substitute(value: Any) -> int:
    if value is True:
        return SubstituteRegex.RAW
    if isinstance(value, int | float) and int(value) in (1, 2):
        return int(value)
    return SubstituteRegex.NONE


def _depth(value: Any) -> int | None:
    # A negative or missing bound is no bound (SillyTavern writes -1 and null for "none").
    if isinstance(value, bool) or value is None or value == "":
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if number >= 0 else None


@dataclass(frozen=True, slots=True)
class CompiledScript:
    """A script compiled once: its regex and replacement when they do not depend on the request.

    `inactive` gives the reason a script will never run (disabled, a pattern JavaScript rejects, no
    placement); `regex` is None when the pattern takes macros (substituteRegex 1 or 2) and is
    compiled per request; `replacement` is None when the replacement or trim strings hold macros.
    """

    script: RegexScript
    regex: JsRegex | None
    replacement: Replacement | None
    inactive: str | None = None

    @property
    def active(self) -> bool:
        return self.inactive is None


def compile_script(script: RegexScript) -> CompiledScript:
    """Compile once (at import, or when the cache is filled); never raises."""
    replacement = None if _has_macros(script) else compile_replacement(_template(script), script.trim_strings)
    if not script.find_regex:
        return CompiledScript(script, None, replacement, "Its findRegex is empty.")
    regex = None
    if script.substitute_regex == SubstituteRegex.NONE:
        try:
            regex = compile_js_regex(*parse_find_regex(script.find_regex))
        except RegexCompileError as exc:
            return CompiledScript(script, None, replacement, exc.message)
    if not script.placement:
        return CompiledScript(script, regex, replacement, "It has no placement, so it never runs.")
    return CompiledScript(script, regex, replacement)


def compile_scripts(scripts: Iterable[RegexScript]) -> tuple[CompiledScript, ...]:
    return tuple(compile_script(script) for script in scripts)


def script_keys(scripts: Sequence[RegexScript]) -> list[str]:
    """A stable key per script of one list: its id when the list has it once, else `#position`."""
    counts = Counter(script.id for script in scripts)
    return [
        script.id if script.id and counts[script.id] == 1 else f"#{position}"
        for position, script in enumerate(scripts, start=1)
    ]


def switched(scripts: Sequence[CompiledScript], switches: Mapping[str, bool]) -> tuple[CompiledScript, ...]:
    """The scripts that run, in order: a server's switch (by `script_keys`) overrides the file's flag."""
    if not switches:
        return tuple(compiled for compiled in scripts if not compiled.script.disabled)
    out = []
    for key, compiled in zip(script_keys([c.script for c in scripts]), scripts, strict=True):
        enabled = switches.get(key, not compiled.script.disabled)
        if enabled:
            out.append(
                compiled
                if not compiled.script.disabled
                else compile_script(replace(compiled.script, disabled=False))
            )
    return tuple(out)


def _template(script: RegexScript) -> str:
    return script.replace_string


def _has_macros(script: RegexScript) -> bool:
    texts = (script.replace_string.replace("{{match}}", ""), *script.trim_strings)
    return any("{" in text or has_angle_form(text) for text in texts)


@dataclass(frozen=True, slots=True)
class PresetScripts:
    """The scripts a preset ships (`extensions.regex_scripts`) and the reasoning delimiters it sets."""

    scripts: tuple[RegexScript, ...]
    skipped: tuple[str, ...]  # one sentence per entry that is not a script
    reasoning_prefix: str | None = None
    reasoning_suffix: str | None = None


MAX_PRESET_SCRIPTS = 512  # a preset's scripts past this are refused at import and never run


def scripts_of_preset(data: Any) -> PresetScripts:
    """Read a preset file's scripts in their array order; entries that are not scripts are skipped
    and named (they never refuse the preset itself). At most `MAX_PRESET_SCRIPTS` are read (a preset
    stored before the cap may hold more; the rest are refused and named)."""
    if not isinstance(data, Mapping):
        return PresetScripts((), ())
    extensions = data.get("extensions")
    raw = extensions.get("regex_scripts") if isinstance(extensions, Mapping) else None
    scripts: list[RegexScript] = []
    skipped: list[str] = []
    items = raw if isinstance(raw, list) else []
    for position, item in enumerate(items[:MAX_PRESET_SCRIPTS], start=1):
        try:
            scripts.append(parse_script(item))
        except ScriptError as exc:
            skipped.append(f"Regex script {position} was skipped: {exc.message}")
    if len(items) > MAX_PRESET_SCRIPTS:
        skipped.append(preset_scripts_refused(len(items)))
    prefix, suffix = _reasoning_delimiters(data)
    return PresetScripts(tuple(scripts), tuple(skipped), prefix, suffix)


def preset_scripts_refused(count: int) -> str:
    """The sentence for a preset carrying `count` (> MAX_PRESET_SCRIPTS) regex scripts."""
    refused = count - MAX_PRESET_SCRIPTS
    return (
        f"This preset carries {count:,} regex scripts; {refused:,} were refused (the ones after the "
        f"first {MAX_PRESET_SCRIPTS}): a preset holds at most {MAX_PRESET_SCRIPTS} regex scripts."
    )


def _reasoning_delimiters(data: Mapping[str, Any]) -> tuple[str | None, str | None]:
    # SillyTavern keeps them in its reasoning template; exports that carry one put it under
    # `reasoning` ({prefix, suffix}) or as top-level `reasoning_prefix` / `reasoning_suffix`.
    block = data.get("reasoning")
    prefix = block.get("prefix") if isinstance(block, Mapping) else data.get("reasoning_prefix")
    suffix = block.get("suffix") if isinstance(block, Mapping) else data.get("reasoning_suffix")
    return (
        prefix if isinstance(prefix, str) and prefix.strip() else None,
        suffix if isinstance(suffix, str) and suffix.strip() else None,
    )


MAX_EXPORT_BYTES = 2 * 1024 * 1024
MAX_EXPORT_SCRIPTS = 1000


def read_export(raw: bytes, *, max_bytes: int = MAX_EXPORT_BYTES) -> list[RegexScript]:
    """An uploaded SillyTavern regex export (bytes) → its scripts; `ScriptError` (one sentence) otherwise."""
    if len(raw) > max_bytes:
        raise ScriptError(f"This file is over the {max_bytes // 1024:,} KiB limit for a regex export.")
    if not raw.strip():
        raise ScriptError("This file is empty.")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ScriptError("This file is not UTF-8 text.") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScriptError(f"This file is not valid JSON (line {exc.lineno}, column {exc.colno}).") from None
    except RecursionError:
        raise ScriptError("This file's JSON is nested too deeply to be a regex export.") from None
    if isinstance(data, list) and len(data) > MAX_EXPORT_SCRIPTS:
        raise ScriptError(f"This export holds {len(data):,} scripts; the limit is {MAX_EXPORT_SCRIPTS:,}.")
    if isinstance(data, Mapping) and "findRegex" not in data and isinstance(data.get("extensions"), Mapping):
        raise ScriptError("This looks like a preset, not a regex export: upload it on the presets page.")
    return parse_scripts(data)
