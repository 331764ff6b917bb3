"""Who made a change is always said (docs/architecture.md, "Vocabulary"): a write's `by` is required
(keyword-only, no default: a Celery task passes `SYSTEM` itself), nobody passes `by=None`, and the
bot is one agent — the label `core.actors.token_agent_for` makes — wherever it writes."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from core import actors
from tests.test_architecture import APPS

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = tuple(name for name in APPS if name != "engine")
CALLERS = (*PRODUCT, "tests", "bench", "devtools", "fidelity", "examples")


def _sources(root: Path, tops: tuple[str, ...]) -> list[tuple[Path, str]]:
    return [
        (path, path.read_text(encoding="utf-8"))
        for top in tops
        for path in sorted((root / top).rglob("*.py"))
        if "migrations" not in path.parts
    ]


def unsaid_actors(sources: list[tuple[Path, str]], root: Path) -> list[str]:
    """Every `by` parameter with a default, every call passing `by=None`, and every agent labelled
    "api…" made outside core/actors.py."""
    found = []
    for path, text in sources:
        where = path.relative_to(root)
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                arguments = node.args
                positional = arguments.posonlyargs + arguments.args
                defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
                pairs = [
                    *zip(positional, defaults, strict=True),
                    *zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True),
                ]
                for argument, default in pairs:
                    if argument.arg == "by" and default is not None:
                        found.append(f"{where}:{node.lineno} {node.name}: `by` has a default")
            elif isinstance(node, ast.Call):
                for keyword in node.keywords:
                    if (
                        keyword.arg == "by"
                        and isinstance(keyword.value, ast.Constant)
                        and keyword.value.value is None
                    ):
                        found.append(f"{where}:{node.lineno} passes by=None")
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
                label = node.args[0] if node.args else None
                if (
                    name == "Agent"
                    and where != Path("core/actors.py")
                    and isinstance(label, ast.Constant | ast.JoinedStr)
                    and ast.unparse(label).lstrip("f").strip("'\"").lower().startswith("api")
                ):
                    found.append(f"{where}:{node.lineno} names the bot itself: use token_agent_for")
    return found


def test_every_write_says_who_made_it_and_the_bot_has_one_name():
    found = unsaid_actors(_sources(ROOT, CALLERS), ROOT)
    assert found == [], "\n".join(found)


def test_the_check_flags_what_alice_plants(tmp_path):
    planted = tmp_path / "presets" / "services.py"
    planted.parent.mkdir()
    planted.write_text(
        "from core.actors import SYSTEM, Actor, Agent\n"
        "def preset_delete(*, preset, by: Actor = SYSTEM):\n"
        "    pass\n"
        "def preset_touch(preset, by=None):\n"
        "    pass\n"
        "def preset_save(*, preset, by: Actor):\n"  # required: fine
        "    preset_delete(preset=preset, by=None)\n"
        "    preset_delete(preset=preset, by=Agent('api'))\n"
        "    preset_delete(preset=preset, by=Agent(f'api token {preset}'))\n"
        "    preset_delete(preset=preset, by=Agent('bench'))\n",  # another agent: fine
        encoding="utf-8",
    )

    found = unsaid_actors([(planted, planted.read_text(encoding="utf-8"))], tmp_path)

    assert found == [
        "presets/services.py:2 preset_delete: `by` has a default",
        "presets/services.py:4 preset_touch: `by` has a default",
        "presets/services.py:7 passes by=None",
        "presets/services.py:8 names the bot itself: use token_agent_for",
        "presets/services.py:9 names the bot itself: use token_agent_for",
    ]


def test_the_actor_helpers_take_an_actor_never_none():
    for helper in (actors.user_of, actors.label_of):
        annotation = str(inspect.signature(helper).parameters["actor"].annotation)
        assert "None" not in annotation, f"{helper.__name__} takes {annotation}"


def test_the_bot_is_named_by_its_token_prefix_and_nothing_else():
    agent = actors.token_agent_for("tk_abcdefghijklmnop")
    assert agent.label == "api token tk_abcdefg"  # the stored prefix: ten characters, never the rest
