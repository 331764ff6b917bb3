"""The macro engine: SillyTavern-style `{{macros}}` parsed once, rendered per request.

Pure Python (no Django). Entry points:
- `compile_text(text)` parses once into a picklable `CompiledText`;
- `render_segments(...)` / `render_text(...)` apply docs/macros.md (one pass as SillyTavern 1.18 renders,
  docs/assembly.md#what-sillytavern-118-corrected; variables, limits); a `RenderMemo` lets one set of segments
  reuse a render whose inputs have not changed;
- `resolve_identity(...)` is the last step, replacing {{user}}/{{char}}/<USER>/... and `{random}` forms,
  then unescaping `\\{` `\\}` (`unescape_braces` alone for text that keeps its identity macros);
- `find_unsupported_macros(text)` lists macro names the engine does not know (import summary).
"""

from .catalog import KNOWN_MACROS
from .channel_cache import mentioned_keys, replay_into_cache
from .dice import MAX_DICE, MAX_SIDES, Roll, parse_roll, roll_each, stream_for
from .env import CONTENT_BLOCKS, MacroEnv, RenderOutput, Segment, SegmentOutput
from .extraction import extract_ops
from .identity import Speaker, depends_on_seed, has_angle_form, resolve_identity, unescape_braces
from .memo import RenderMemo
from .nodes import Macro, Scoped
from .parser import CompiledText, compile_text, find_unsupported_macros
from .render import compiled_once, render_segments, render_text, render_texts, static_text
from .replay import (
    WRITE_OPS,
    Op,
    OpError,
    Replay,
    apply_ops,
    make_op,
    op_from_dict,
    ops_from_json,
    replay_steps,
)
from .values import to_text

__all__ = [
    "CONTENT_BLOCKS",
    "KNOWN_MACROS",
    "MAX_DICE",
    "MAX_SIDES",
    "WRITE_OPS",
    "CompiledText",
    "Macro",
    "MacroEnv",
    "Op",
    "OpError",
    "RenderMemo",
    "RenderOutput",
    "Replay",
    "Roll",
    "Scoped",
    "Segment",
    "SegmentOutput",
    "Speaker",
    "apply_ops",
    "compile_text",
    "compiled_once",
    "depends_on_seed",
    "extract_ops",
    "find_unsupported_macros",
    "has_angle_form",
    "make_op",
    "mentioned_keys",
    "op_from_dict",
    "ops_from_json",
    "parse_roll",
    "render_segments",
    "render_text",
    "render_texts",
    "replay_into_cache",
    "replay_steps",
    "resolve_identity",
    "roll_each",
    "static_text",
    "stream_for",
    "to_text",
    "unescape_braces",
]
