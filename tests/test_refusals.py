"""The surfaces catch the error roots (docs/architecture.md, "Vocabulary"): no `except` clause in a
page view, an API view or a management command names a feature's own error class — it catches
`core.errors.REFUSALS` (either root) and shows it through that surface's one helper — except the few
classes that need a page of their own."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any

from core.errors import NameClash, UserError
from engine.errors import EngineError
from presets.editor.services import PresetConflict
from presets.versions.selectors import VersionNotFound

ROOT = Path(__file__).resolve().parents[1]
ROOTS = (UserError, EngineError)
# The classes caught by name, each for a page of its own: a name clash asks whether to replace or keep
# both; an edit made on an old version shows the conflict; a version that is not there is a 404 page.
ALLOWED_BY_NAME: tuple[type[Exception], ...] = (NameClash, PresetConflict, VersionNotFound)


def is_surface(relative: Path) -> bool:
    """A page view, an API view or a management command."""
    if "tests" in relative.parts or ".venv" in relative.parts or "migrations" in relative.parts:
        return False
    stem = relative.stem
    in_commands = relative.parent.parts[-2:] == ("management", "commands")
    return in_commands or stem in ("views", "api") or stem.startswith("views_")


def surface_modules(root: Path) -> list[str]:
    return sorted(
        ".".join(path.relative_to(root).with_suffix("").parts)
        for path in root.rglob("*.py")
        if is_surface(path.relative_to(root)) and path.name != "__init__.py"
    )


def _caught(handler: ast.ExceptHandler) -> list[ast.expr]:
    if handler.type is None:
        return []
    return list(handler.type.elts) if isinstance(handler.type, ast.Tuple) else [handler.type]


def specific_catches(source: str, namespace: dict[str, Any], *, where: str) -> list[str]:
    """Every class an `except` clause of `source` names that descends from a root (the roots
    themselves and ALLOWED_BY_NAME aside). Names are looked up in `namespace`, the module's own
    globals, so `services.PresetError` and an alias are resolved as Python would."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ExceptHandler):
            continue
        for expr in _caught(node):
            try:
                value = eval(compile(ast.Expression(expr), where, "eval"), dict(namespace))
            except Exception:  # `self.x`, a local: not a module-level class
                continue
            for caught in value if isinstance(value, tuple) else (value,):
                if (
                    isinstance(caught, type)
                    and issubclass(caught, ROOTS)
                    and caught not in ROOTS
                    and not issubclass(caught, ALLOWED_BY_NAME)
                ):
                    found.append(f"{where}:{node.lineno} catches {caught.__name__}")
    return found


def test_the_surfaces_are_found():
    modules = surface_modules(ROOT)
    assert {
        "presets.views",
        "presets.api",
        "assembly.views_preview",
        "presets.editor.views",
        "memory.management.commands.stm",
        "regex_scripts.management.commands.regex",
    } <= set(modules)


def test_no_view_api_view_or_command_catches_a_features_own_error_class():
    found = []
    for name in surface_modules(ROOT):
        module = importlib.import_module(name)
        path = Path(module.__file__ or "")
        found += specific_catches(path.read_text(encoding="utf-8"), vars(module), where=name)
    assert found == [], (
        "catch core.errors.REFUSALS and show it with the surface's helper "
        "(docs/architecture.md, “Vocabulary”):\n" + "\n".join(found)
    )


def test_the_check_flags_what_alice_plants_and_passes_the_roots_and_conflicts():
    planted = """
from core.errors import REFUSALS, UserError
from engine import BucketError
from presets import services
from presets.editor import services as edit_services
from presets.selectors import PresetNotFound as Missing
from regex_scripts.services import RegexScriptError
from engine.regex import ScriptError

def view(request):
    try:
        pass
    except (ScriptError, RegexScriptError) as exc:
        pass
    except Missing:
        pass
    except services.PresetError:
        pass
    except edit_services.PresetConflict:  # a conflict: its own page
        pass
    except services.PresetNameClash:  # a name clash: its own page
        pass
    except REFUSALS:
        pass
    except (UserError, ValueError, KeyError):
        pass
    except self.refusals:
        pass
"""
    namespace: dict[str, Any] = {}
    exec(compile(planted, "planted", "exec"), namespace)

    assert specific_catches(planted, namespace, where="planted") == [
        "planted:13 catches ScriptError",
        "planted:13 catches RegexScriptError",
        "planted:15 catches PresetNotFound",
        "planted:17 catches PresetError",
    ]


def test_every_feature_error_class_descends_from_a_root():
    """A feature's refusal the surfaces are to show descends from a root; one that does not would
    slip past them as a 500 (the few plain exceptions left are not shown to a user as sentences)."""
    import assembly.sample_form
    import conversations.channels.selectors
    import conversations.channels.services
    import presets.channels.services
    import servers.services

    for cls in (
        assembly.sample_form.SampleFormError,
        conversations.channels.services.ChannelError,
        conversations.channels.selectors.UnknownMessage,
        presets.channels.services.ChannelPresetRefused,
        servers.services.TokenizerRefused,
    ):
        assert issubclass(cls, ROOTS)
