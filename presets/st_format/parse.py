"""Entry point: bytes in, ParsedPreset out (or ImportRefused)."""

from __future__ import annotations

from presets.st_format.model import ImportRefused, ParsedPreset

DEFAULT_MAX_BYTES = 2 * 1024 * 1024


def preset_name_from_filename(filename: str) -> str:
    """The preset name for an upload: file name without a trailing .json, trimmed, at most 100 chars."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1].strip()
    if name.lower().endswith(".json"):
        name = name[:-5]
    return name.strip()[:100].strip()


def parse_preset(raw: bytes, *, filename: str, max_bytes: int = DEFAULT_MAX_BYTES) -> ParsedPreset:
    """Parse an uploaded SillyTavern file; raises ImportRefused with one sentence when it is not a preset."""
    raise ImportRefused("The importer is not finished yet.")
