"""SillyTavern preset import: pure parsing of an uploaded file into nodes, settings and a summary.

No Django here; the presets app stores what this package returns.
"""

from engine.st_format.decode import check_size
from engine.st_format.model import (
    ImportRefused,
    ImportSummary,
    ParsedPreset,
    PresetNode,
    PromptSettings,
)
from engine.st_format.parse import parse_preset, preset_name_from_filename
from engine.st_format.summary import HTML_WARNING, node_warnings, resummarize, summarize

__all__ = [
    "HTML_WARNING",
    "ImportRefused",
    "ImportSummary",
    "ParsedPreset",
    "PresetNode",
    "PromptSettings",
    "check_size",
    "node_warnings",
    "parse_preset",
    "preset_name_from_filename",
    "resummarize",
    "summarize",
]
