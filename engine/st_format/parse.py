"""Entry point: an uploaded file's bytes in, a ParsedPreset out, or ImportRefused with one sentence."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from engine.regex import MAX_PRESET_SCRIPTS, preset_scripts_refused
from engine.sampling import PRESET_KEYS, sampler_settings_of
from engine.st_format.chat_template import TokenStripper, instruct_sequences
from engine.st_format.decode import TOO_DEEP, decode_upload
from engine.st_format.legacy import (
    convert_story_string,
    convert_system_prompt,
    story_string_of,
    system_prompt_text,
)
from engine.st_format.model import ImportRefused, ParsedPreset, PromptSettings
from engine.st_format.post_history import post_history_nodes
from engine.st_format.prompt_manager import (
    PRE_PM_KEYS,
    Converted,
    parse_pre_prompt_manager,
    parse_prompt_manager,
)
from engine.st_format.shapes import detect_shape, lone_system_prompt
from engine.st_format.summary import summarize
from engine.st_format.wording import short_list

DEFAULT_MAX_BYTES = 2 * 1024 * 1024
NAME_LIMIT = 100
UNNAMED = "Imported preset"  # for a file called just ".json"
SECRET_KEYS = (
    "reverse_proxy",
    "proxy_password",
    "custom_url",
    "custom_include_headers",
    "custom_include_body",
    "custom_exclude_body",
)
SETTING_KEYS = (
    "squash_system_messages",
    "personality_format",
    "scenario_format",
    "wi_format",
    "new_example_chat_prompt",
    "new_chat_prompt",
    "new_group_chat_prompt",
    "group_nudge_prompt",
    "names_behavior",
    "assistant_prefill",
    "assistant_impersonation",
    "continue_prefill",
    "continue_nudge_prompt",
    "impersonation_prompt",
    "send_if_empty",
)
# Keys the conversion itself reads, or that only name the file: neither applied settings nor "kept".
_CONSUMED = {
    "prompt_manager": {"prompts", "prompt_order"},
    "pre_prompt_manager": set(PRE_PM_KEYS) | {"prompts"},
    "text_completion": {"story_string", "content", "system_prompt"},
    "system_prompt": {"content", "system_prompt"},
}
_ALWAYS_CONSUMED = {"name", "post_history", *SETTING_KEYS, *SECRET_KEYS}
_SECTION_CONSUMED = {
    "context": {"story_string", "post_history", "name"},
    "sysprompt": {"content", "post_history", "name"},
    "instruct": {"system_prompt", "name"},
}


def preset_name_from_filename(filename: str) -> str:
    """The preset name for an upload: the file name without a trailing .json, trimmed, at most 100 chars."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1].strip()
    if name.lower().endswith(".json"):
        name = name[:-5]
    return name.strip()[:NAME_LIMIT].strip() or UNNAMED


def _cap_regex_scripts(data: dict[str, Any]) -> list[str]:
    """Keep at most MAX_PRESET_SCRIPTS regex scripts in the stored preset, in place (issue 25: a
    preset's scripts all run on every assembly); the sentence saying how many were refused."""
    extensions = data.get("extensions")
    if not isinstance(extensions, dict):
        return []
    scripts = extensions.get("regex_scripts")
    if not isinstance(scripts, list) or len(scripts) <= MAX_PRESET_SCRIPTS:
        return []
    extensions["regex_scripts"] = scripts[:MAX_PRESET_SCRIPTS]
    return [preset_scripts_refused(len(scripts))]


def _blank_secrets(data: dict[str, Any]) -> tuple[str, ...]:
    """Blank every secret that has a value, in place; the names of those blanked."""
    blanked = []
    for key in SECRET_KEYS:
        value = data.get(key)
        if value not in (None, "", [], {}, False):
            data[key] = type(value)() if isinstance(value, (dict, list)) else ""
            blanked.append(key)
    return tuple(blanked)


_STRING_VALUE = re.compile(r'\s*:\s*"(?:[^"\\]|\\.)*+"', re.S)


def _blank_in_text(text: str, secrets: tuple[str, ...]) -> str | None:
    """`text` with each secret's string value emptied in place, or None when that cannot be done."""
    for key in secrets:
        token = f'"{key}"'
        pieces = []
        done = 0
        at = text.find(token)
        while at >= 0:
            value = _STRING_VALUE.match(text, at + len(token))
            if value is not None and (at == 0 or text[at - 1] != "\\"):
                pieces.append(text[done : at + len(token)] + ': ""')
                done = value.end()
            at = text.find(token, at + len(token))
        if not pieces:
            return None
        text = "".join(pieces) + text[done:]
    return text


def _stored_text(text: str, data: dict[str, Any], secrets: tuple[str, ...], *, rewrite: bool) -> str:
    """The upload as text with secrets blanked: edited in place when possible, so the file keeps its
    formatting; re-serialised (key order kept) when NULs were removed or a secret is not a string."""
    if not secrets and not rewrite:
        return text
    if not rewrite:
        edited = _blank_in_text(text, secrets)
        if edited is not None:
            check = json.loads(edited, strict=False)
            if isinstance(check, dict) and all(check.get(key) == "" for key in secrets):
                return edited
    return json.dumps(data, ensure_ascii=False, indent=4)


def _settings(data: dict[str, Any]) -> tuple[PromptSettings, list[str]]:
    """The prompt-shaping settings the file sets (wrong types fall back to the default, warned)."""
    defaults = PromptSettings()
    values: dict[str, Any] = {}
    bad = []
    for key in SETTING_KEYS:
        if key not in data or data[key] is None:
            continue
        expected = type(getattr(defaults, key))
        if key == "names_behavior" and data[key] not in NAMES_BEHAVIORS:
            bad.append(key)
        elif isinstance(data[key], expected):
            values[key] = data[key]
        else:
            bad.append(key)
    warnings = (
        [f"Settings of the wrong type were ignored and the defaults used: {', '.join(bad)}."] if bad else []
    )
    return PromptSettings(**values), warnings


NAMES_BEHAVIORS = (-1, 0, 1, 2)  # none, default, completion (the `name` field), content
_SAMPLER_KEYS = frozenset(PRESET_KEYS)  # sent to the model per the server's choice (engine.sampling)


def _kept_not_applied(data: dict[str, Any], shape: str) -> tuple[str, ...]:
    """Top-level data stored with the preset but not applied (sampler settings, regex scripts, models)."""
    consumed = _CONSUMED[shape] | _ALWAYS_CONSUMED | _SAMPLER_KEYS
    kept: list[str] = []
    for key, value in data.items():
        if key in consumed:
            continue
        if key in _SECTION_CONSUMED and isinstance(value, dict):
            kept.extend(f"{key}.{inner}" for inner in value if inner not in _SECTION_CONSUMED[key])
        elif key == "extensions" and isinstance(value, dict) and value:
            kept.extend(f"extensions.{inner}" for inner in value)
        else:
            kept.append(key)
    return tuple(kept)


def _convert(data: dict[str, Any], shape: str) -> Converted:
    if shape == "prompt_manager":
        return parse_prompt_manager(data)
    if shape == "pre_prompt_manager":
        return parse_pre_prompt_manager(data)
    if shape == "text_completion":
        return convert_story_string(data, story_string_of(data) or "")
    text = lone_system_prompt(data) or system_prompt_text(data) or ""
    return convert_system_prompt(data, text)


def parse_preset(raw: bytes, *, filename: str, max_bytes: int = DEFAULT_MAX_BYTES) -> ParsedPreset:
    """The preset in an uploaded SillyTavern file (docs/import.md); raises ImportRefused with one sentence if
    none."""
    try:
        return _parse(raw, filename=filename, max_bytes=max_bytes)
    except RecursionError:
        # json.loads stops near the interpreter's limit, so walking the result (NUL removal,
        # re-serialising) can still run out of stack on a file nested almost that deep.
        raise ImportRefused(TOO_DEEP) from None


def _parse(raw: bytes, *, filename: str, max_bytes: int) -> ParsedPreset:
    decoded = decode_upload(raw, max_bytes=max_bytes)
    data = decoded.data
    shape = detect_shape(data)
    converted = _convert(data, shape)
    # Text-completion exports carry template tokens in their post-history too; chat presets do not.
    legacy = shape in ("text_completion", "system_prompt")
    strip = TokenStripper(instruct_sequences(data.get("instruct")) if legacy else ())
    clean = strip.strip if legacy else str
    nodes = converted.nodes + post_history_nodes(data, converted.nodes, clean)
    post_warnings = (
        [
            f"Chat-template tokens were removed from the post-history instructions: {short_list(strip.removed)}."
        ]
        if strip.removed
        else []
    )
    settings, setting_warnings = _settings(data)
    settings = replace(settings, converted=legacy)
    secrets = _blank_secrets(data)
    script_warnings = _cap_regex_scripts(data)
    stored_text = _stored_text(
        decoded.text, data, secrets, rewrite=decoded.nul_removed > 0 or bool(script_warnings)
    )
    summary = summarize(
        nodes,
        shape=shape,
        not_in_order=converted.not_in_order,
        import_warnings=(
            *decoded.warnings,
            *converted.warnings,
            *post_warnings,
            *setting_warnings,
            *script_warnings,
        ),
        notes=converted.notes,
        secrets_blanked=secrets,
        kept_not_applied=_kept_not_applied(data, shape),
        sampler_settings=tuple(key for key in data if key in _SAMPLER_KEYS and data[key] is not None),
    )
    return ParsedPreset(
        name=preset_name_from_filename(filename),
        shape=shape,
        nodes=nodes,
        settings=settings,
        summary=summary,
        stored_text=stored_text,
        sampling=sampler_settings_of(data).to_dict(),
    )
