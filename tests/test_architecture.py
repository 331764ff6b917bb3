"""The shape docs/architecture.md promises: the layers (no app uses one above it), a pure engine, no
import loops, imports in plain sight, the engine reached through its package faces, and another app's
rows read through its selectors.

Every Django app of the project is walked: the list comes from INSTALLED_APPS (the apps whose code
lives in this repository), so a new app is walked without editing this file.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Collection
from pathlib import Path

import pytest_django.fixtures
from django.conf import settings

ROOT = Path(__file__).resolve().parents[1]
DJANGO_APPS = tuple(
    sorted(
        name for name in settings.INSTALLED_APPS if "." not in name and (ROOT / name / "apps.py").is_file()
    )
)
APPS = ("engine", "core", "config", *DJANGO_APPS)
# The apps every other app may read models from: the floor (servers, users, audit) everything hangs off.
FLOOR = ("servers",)
# The layers, bottom to top (docs/architecture.md, "Layers"). A package uses the layers below its
# own, never one above it and never another package of its own layer.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("engine",),
    ("core",),
    ("servers",),
    ("characters", "conversations", "lorebooks", "memory"),
    ("presets",),
    ("groups", "regex_scripts"),
    ("assembly",),
    ("config",),
)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for top in APPS:
        for path in sorted((ROOT / top).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> list[tuple[str, ast.stmt, bool]]:
    """(imported module, statement, inside a function) for every import of a project module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[tuple[str, ast.stmt, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.Import):
                out.extend((alias.name, child, in_function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    base = ".".join([*anchor, *([base] if base else [])])
                for alias in child.names:
                    full = f"{base}.{alias.name}"
                    out.append((full if full in MODULES else base, child, in_function))
            visit(child, nested)

    visit(tree, False)
    return [(target, stmt, inside) for target, stmt, inside in out if target.split(".")[0] in APPS]


def test_every_app_directory_is_an_installed_app_and_walked():
    on_disk = sorted(path.parent.name for path in ROOT.glob("*/apps.py"))
    assert on_disk == sorted(DJANGO_APPS)
    assert {"lorebooks", "regex_scripts", "characters", "presets", "memory"} <= set(DJANGO_APPS)


def test_every_walked_package_has_its_place_in_exactly_one_layer():
    placed = [name for layer in LAYERS for name in layer]
    assert sorted(placed) == sorted(APPS), "a new app takes its place in LAYERS (and docs/architecture.md)"


def _references(
    path: Path, package: str, modules: Collection[str], models: dict[str, str]
) -> list[tuple[str, int, str]]:
    """(top-level package, line, how) for everything a module reaches: imports at any depth (inside
    functions and `if TYPE_CHECKING:` too), `apps.get_model("app.Model")` and
    `apps.get_model("app", "Model")`, a model's label in a string ("presets.Preset", however it is
    used later) and a project module's dotted name in a string ("presets.demo", for import_module)."""
    out: list[tuple[str, int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.extend(
                (alias.name.split(".")[0], node.lineno, f"import {alias.name}") for alias in node.names
            )
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                out.append((node.module.split(".")[0], node.lineno, f"from {node.module} import"))
            elif node.level > len(package.split(".")):
                out.append(("?", node.lineno, "a relative import out of its app"))
        elif isinstance(node, ast.Call) and _called_name(node.func) == "get_model":
            texts = [
                arg.value for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
            ]
            if texts:
                label = texts[0].split(".")[0]
                out.append(
                    (models.get(f"{label}.", label), node.lineno, f"get_model({', '.join(map(repr, texts))})")
                )
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "." in node.value:
            text = node.value
            if text.lower() in models:
                out.append((models[text.lower()], node.lineno, f"the model label {text!r}"))
            elif " " not in text and any(text == m or text.startswith(m + ".") for m in modules if "." in m):
                out.append((text.split(".")[0], node.lineno, f"the module name {text!r}"))
    # one line per reference: get_model("presets.Preset") is not counted again for its label
    return list({(target, line): (target, line, how) for target, line, how in reversed(out)}.values())


def _called_name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def layer_breaches(
    modules: dict[str, Path], layers: tuple[tuple[str, ...], ...], models: dict[str, str]
) -> list[str]:
    """Every reference from a package to one above it or beside it in its layer. `models` maps a
    lower-cased model label ("presets.preset") to its package, and an app label plus "." to it."""
    level = {name: index for index, layer in enumerate(layers) for name in layer}
    breaches = []
    for name, path in sorted(modules.items()):
        top = name.split(".")[0]
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for target, line, how in _references(path, package, modules.keys(), models):
            if target == top or (target not in level and target != "?"):
                continue  # its own package, the standard library, Django, a third party
            if target == "?" or level[target] >= level[top]:
                where = "beside it" if level.get(target) == level[top] else "above it"
                breaches.append(f"{path}:{line} {top} → {target} ({where}): {how}")
    return breaches


def _project_models() -> dict[str, str]:
    from django.apps import apps  # the registry is read once settings are loaded

    found: dict[str, str] = {}
    for config in apps.get_app_configs():
        if config.name not in DJANGO_APPS:
            continue
        found[f"{config.label}."] = config.name
        found.update({model._meta.label_lower: config.name for model in config.get_models()})
    return found


def test_no_package_reaches_a_layer_above_its_own_or_beside_it():
    breaches = layer_breaches(MODULES, LAYERS, _project_models())
    assert breaches == [], (
        "upward or sideways references (add a hook the lower app owns instead):\n" + "\n".join(breaches)
    )


def test_the_layer_check_catches_what_alice_plants_in_a_small_tree(tmp_path):
    # Alice plants one of each reference the check must see, and one harmless import.
    planted = {
        "servers/status.py": "from django.apps import apps\nPRESET = apps.get_model('presets.Preset')\n",
        "servers/demo.py": "from django.apps import apps\nCARD = apps.get_model('characters', 'Card')\n",
        "servers/hooks.py": "from importlib import import_module\nHOOKS = ['presets.demo']\n",
        "servers/counts.py": "COUNTS = [('Presets', 'presets.Preset')]\n",
        "memory/views.py": "def review():\n    from groups import selectors  # the notes\n    return selectors\n",
        "characters/cards.py": "import lorebooks.selectors\n",
        "core/cache.py": "from ..servers import models\n",
        "presets/views.py": "from servers.models import Server\nfrom memory import selectors\n",
        "presets/demo.py": "",
    }
    modules = {}
    for relative, text in planted.items():
        path = tmp_path / relative
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        modules[relative.removesuffix(".py").replace("/", ".")] = path
    models = {
        "presets.preset": "presets",
        "characters.card": "characters",
        "presets.": "presets",
        "characters.": "characters",
    }

    breaches = layer_breaches(modules, LAYERS, models)

    def flagged(relative: str, target: str) -> bool:
        return any(f"{tmp_path / relative}:" in b and f"→ {target} " in b for b in breaches)

    assert flagged("servers/status.py", "presets")
    assert flagged("servers/demo.py", "characters")
    assert flagged("servers/hooks.py", "presets")
    assert flagged("servers/counts.py", "presets")
    assert flagged("memory/views.py", "groups")
    assert flagged("characters/cards.py", "lorebooks")
    assert any(f"{tmp_path / 'core/cache.py'}:" in b for b in breaches)
    assert not any(str(tmp_path / "presets") in b for b in breaches)
    assert len(breaches) == 7


def _plain_imports(path: Path) -> list[tuple[str, int]]:
    """(module named, line) for every absolute import, leaving out `if TYPE_CHECKING:` blocks
    (annotations, not reads)."""
    out: list[tuple[str, int]] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                visit_list(child.orelse)
                continue
            if isinstance(child, ast.Import):
                out.extend((alias.name, child.lineno) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and not child.level and child.module:
                out.append((child.module, child.lineno))
                # `from presets import models` reads the models module too
                out.extend(
                    (f"{child.module}.models", child.lineno)
                    for alias in child.names
                    if alias.name == "models"
                )
            visit(child)

    def visit_list(nodes: list[ast.stmt]) -> None:
        for stmt in nodes:
            wrapper = ast.Module(body=[stmt], type_ignores=[])
            visit(wrapper)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return out


def _is_engine_face(module: str) -> bool:
    parts = module.split(".")
    return len(parts) == 1 or (len(parts) == 2 and (ROOT / "engine" / parts[1] / "__init__.py").is_file())


def test_no_caller_imports_the_engine_past_its_package_faces():
    past = [
        f"{path.relative_to(ROOT)}:{line} {module}"
        for name, path in MODULES.items()
        if name.split(".")[0] != "engine"
        for module, line in _plain_imports(path)
        if module.split(".")[0] == "engine" and not _is_engine_face(module)
    ]
    assert past == [], f"imports past the engine's faces (export it from the package instead): {past}"


def test_an_app_reads_another_apps_rows_through_its_selectors_not_its_models():
    # Models may point at another app's models (foreign keys); everything else asks the owner.
    reads = [
        f"{path.relative_to(ROOT)}:{line} {module}"
        for name, path in MODULES.items()
        if name.split(".")[0] in DJANGO_APPS and path.name != "models.py"
        for module, line in _plain_imports(path)
        if _models_of_another_app(module, name.split(".")[0])
    ]
    assert reads == [], f"another app's models read directly: {reads}"


def _models_of_another_app(module: str, app: str) -> bool:
    parts = module.split(".")
    return (
        len(parts) >= 2 and parts[1] == "models" and parts[0] in DJANGO_APPS and parts[0] not in (app, *FLOOR)
    )


def test_no_two_project_modules_import_each_other_even_from_inside_a_function():
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for name, path in MODULES.items():
        for target, _, _ in _imports(name, path):
            # A module importing its own package's __init__ is how Python loads packages, not a loop.
            if target in MODULES and target != name and not name.startswith(target + "."):
                graph[name].add(target)
    loops = [component for component in _strongly_connected(graph) if len(component) > 1]
    assert loops == [], f"import loops: {loops}"


def test_an_import_inside_a_function_says_why_in_a_comment():
    silent = []
    for name, path in MODULES.items():
        lines = path.read_text(encoding="utf-8").splitlines()
        for _, stmt, inside in _imports(name, path):
            if not inside:
                continue
            if "#" not in lines[stmt.lineno - 1] and not _comment_above(lines, stmt.lineno - 1):
                silent.append(f"{path.relative_to(ROOT)}:{stmt.lineno}")
    assert silent == [], f"imports hidden in functions without a reason: {silent}"


def _comment_above(lines: list[str], index: int) -> bool:
    """A comment line right above the statement, or above the run of imports it belongs to."""
    for line in reversed(lines[:index]):
        stripped = line.strip()
        if stripped.startswith("#"):
            return True
        if stripped and not stripped.startswith(("from ", "import ")):
            return False
    return False


def test_every_engine_module_imports_on_its_own_without_django_or_the_apps():
    engine_modules = sorted(name for name in MODULES if name.split(".")[0] == "engine")
    script = (
        "import importlib, sys\n"
        f"names = {engine_modules!r}\n"
        "for name in names:\n"
        "    for loaded in [m for m in sys.modules if m == 'engine' or m.startswith('engine.')]:\n"
        "        del sys.modules[loaded]\n"
        "    importlib.import_module(name)\n"
        "leaked = sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{('django', *DJANGO_APPS)!r})\n"
        "print(leaked)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=900, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", f"the engine pulled in: {result.stdout.strip()}"


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (the graph is a few hundred modules)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


# The assembler: its package, which holds the stage modules only it drives (docs/architecture.md, "The engine").
ASSEMBLER = ("engine.assemble",)


def assembler_reaches(modules: dict[str, Path]) -> list[str]:
    """Every import, type-only ones too, by which an engine feature package (a sub-package other than
    the assembler's own) reaches into the assembler."""
    out = []
    for name, path in modules.items():
        parts = name.split(".")
        in_a_package = len(parts) >= 3 or (len(parts) == 2 and path.name == "__init__.py")
        if parts[0] != "engine" or not in_a_package or parts[1] == "assemble":
            continue
        for target, _stmt, _inside in _imports(name, path):
            if any(target == a or target.startswith(a + ".") for a in ASSEMBLER):
                out.append(f"{name} → {target}")
    return sorted(out)


def test_no_feature_package_of_the_engine_reaches_into_the_assembler():
    reaches = assembler_reaches(MODULES)
    assert reaches == [], "the assembler calls the feature packages, never the other way:\n" + "\n".join(
        reaches
    )


def test_the_assembler_check_sees_what_bob_plants_in_world_info_and_groups(tmp_path):
    planted = {
        "engine/worldinfo/placement.py": "from engine.assemble.rearrange import Injection\n",
        "engine/groups/nudge.py": (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..assemble.state import State\n"
        ),
        "engine/assemble/native.py": "from .rearrange import Arrangement\n",  # a stage module: allowed
        "engine/cards/card.py": "from ..parts import Item\n",  # shared vocabulary: allowed
    }
    modules = {}
    for relative, text in planted.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        modules[relative.removesuffix(".py").replace("/", ".")] = path

    assert assembler_reaches(modules) == [
        "engine.groups.nudge → engine.assemble.state",
        "engine.worldinfo.placement → engine.assemble.rearrange",
    ]


# The tests and the benchmarks share what both need through devtools/ (docs/architecture.md#tests-and-benchmarks):
# neither reaches into the other, devtools into neither, and the product into none of the three.
CROSSINGS_FORBIDDEN = {
    "tests": ("bench",),
    "bench": ("tests",),
    "devtools": ("tests", "bench"),
    **{package: ("tests", "bench", "devtools") for package in APPS},
}


def _reaches(path: Path) -> list[tuple[str, int, str]]:
    """(top-level name, line, how) for every absolute import at any depth, and for a string joined into
    a path or handed to a call ("bench", "tests/browser": what `sys.path.insert` and
    `spec_from_file_location` get), read as a folder of the repository's root."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[tuple[str, int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend(
                (alias.name.split(".")[0], node.lineno, f"import {alias.name}") for alias in node.names
            )
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.module.split(".")[0], node.lineno, f"from {node.module} import"))
        elif isinstance(node, ast.BinOp | ast.Call):
            operands = [node.left, node.right] if isinstance(node, ast.BinOp) else node.args
            out.extend(
                (operand.value.split("/")[0], operand.lineno, f"the path {operand.value!r}")
                for operand in operands
                if isinstance(operand, ast.Constant) and isinstance(operand.value, str)
            )
    return out


def crossings(root: Path, forbidden: dict[str, tuple[str, ...]]) -> list[str]:
    """Every reach from one of `forbidden`'s folders into a folder it must leave alone."""
    return [
        f"{path.relative_to(root)}:{line} {side} → {target}: {how}"
        for side, others in forbidden.items()
        for path in sorted((root / side).rglob("*.py"))
        for target, line, how in _reaches(path)
        if target in others
    ]


def test_tests_and_bench_do_not_import_each_other():
    found = crossings(ROOT, CROSSINGS_FORBIDDEN)
    assert found == [], "move what both need into devtools/:\n" + "\n".join(found)


def test_the_crossing_check_catches_what_alice_plants_in_a_small_tree(tmp_path):
    planted = {
        "tests/test_load.py": "def test_it():\n    from bench.web_process import free_port\n",
        "tests/factories.py": '"""Like bench/genpreset.py."""\nfrom devtools.genpreset import make_big_preset\n',
        "bench/editor.py": "import sys\nsys.path.insert(0, str(ROOT / 'tests' / 'browser'))\n",
        "bench/cache_hits.py": "import tests.factories\n",
        "bench/fuzz.py": "from devtools.fuzz.strategies import macro_text\nLABEL = 'tests passed'\n",
        "devtools/worker.py": "from tests import corpus\n",
        "presets/demo.py": "from devtools.factories import make_preset\n",
    }
    for relative, text in planted.items():
        (tmp_path / relative).parent.mkdir(exist_ok=True)
        (tmp_path / relative).write_text(text, encoding="utf-8")

    found = crossings(tmp_path, CROSSINGS_FORBIDDEN)

    assert [line.split(":")[0] for line in found] == [
        "tests/test_load.py",
        "bench/cache_hits.py",
        "bench/editor.py",
        "devtools/worker.py",
        "presets/demo.py",
    ]


# The engine's tests need what the engine needs, so `pytest tests/engine` runs without a database
# (docs/architecture.md#tests-and-benchmarks).
ENGINE_TESTS_MAY_IMPORT = ("engine", "pytest", "hypothesis")
TEST_HELPERS = ("tests", "devtools")


def engine_test_reaches(root: Path) -> list[str]:
    """Every import under tests/engine of anything beyond the engine, the standard library, pytest and
    Hypothesis, and every function there asking for a fixture of pytest-django's or of tests/conftest.py
    (the database, the settings, the personas). A helper module of tests/ or devtools/ that an engine
    test imports is walked the same way, so a helper cannot bring Django in for it."""
    django_fixtures = _django_fixtures(root)
    found: list[str] = []
    todo = sorted((root / "tests" / "engine").rglob("*.py"))
    seen: set[Path] = set()
    while todo:
        path = todo.pop(0)
        if path in seen:
            continue
        seen.add(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and _asks_for_fixtures(node):
                asked = [arg.arg for arg in node.args.args if arg.arg in django_fixtures]
                found.extend(f"{path.relative_to(root)}:{node.lineno} the fixture {name}" for name in asked)
            if isinstance(node, ast.ImportFrom) and node.level:
                base = path.parents[node.level - 1]
                todo.extend(_helper_files(base, node.module, node.names))
                continue
            if isinstance(node, ast.Import):
                named: list[tuple[str, list[ast.alias]]] = [(alias.name, []) for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                named = [(node.module, node.names)]
            else:
                continue
            for module, names in named:
                top = module.split(".")[0]
                if top in sys.stdlib_module_names or top in ENGINE_TESTS_MAY_IMPORT:
                    continue
                helpers = _helper_files(root, module, names) if top in TEST_HELPERS else []
                if helpers:
                    todo.extend(helpers)
                else:
                    found.append(f"{path.relative_to(root)}:{node.lineno} {module}")
    return found


def _asks_for_fixtures(function: ast.FunctionDef) -> bool:
    """A test or a fixture: what pytest calls with fixtures (a plain helper's arguments are its own)."""
    return function.name.startswith("test") or any(
        "fixture" in ast.unparse(decorator) for decorator in function.decorator_list
    )


def _django_fixtures(root: Path) -> set[str]:
    names = {*pytest_django.fixtures.__all__, "django_db_blocker", "mailoutbox"}
    conftest = root / "tests" / "conftest.py"
    if conftest.is_file():
        names |= {
            node.name
            for node in ast.parse(conftest.read_text(encoding="utf-8")).body
            if isinstance(node, ast.FunctionDef)
            and any("fixture" in ast.unparse(d) for d in node.decorator_list)
        }
    return names


def _helper_files(base: Path, module: str | None, names: list[ast.alias]) -> list[Path]:
    """The files `from module import names` (or `import module`) reads, below `base`."""
    folder = base.joinpath(*module.split(".")) if module else base
    candidates = [folder.with_suffix(".py"), folder / "__init__.py"]
    candidates += [folder / f"{alias.name}.py" for alias in names]
    return [path for path in candidates if path.is_file()]


def test_the_engine_tests_import_only_the_engine_the_standard_library_pytest_and_hypothesis():
    found = engine_test_reaches(ROOT)
    assert found == [], "an engine test (or its helper) reaches past the engine:\n" + "\n".join(found)


def test_the_engine_test_check_catches_what_alice_plants_in_a_small_tree(tmp_path):
    planted = {
        "tests/engine/macros/conftest.py": "from engine.macros import render_text\n",
        "tests/engine/macros/test_render.py": "import json\nfrom .conftest import render_text\n"
        "from hypothesis import given\n\n\ndef test_it(settings):\n    from django.conf import settings\n",
        "tests/engine/test_fuzz.py": "from devtools.fuzz.targets import macro_target\n",
        "devtools/fuzz/targets.py": "from engine import assemble\n",
        "tests/engine/factories.py": "from tests.helpers import stored\n",
        "tests/helpers.py": "from presets.models import Preset\n",
        "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef lantern(db):\n    return 1001\n",
        "tests/engine/test_memo.py": "def test_one(tmp_path, monkeypatch):\n    pass\n\n\ndef test_two(lantern):\n    pass\n",
    }
    for relative, text in planted.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text, encoding="utf-8")

    assert sorted(engine_test_reaches(tmp_path)) == [
        "tests/engine/macros/test_render.py:6 the fixture settings",
        "tests/engine/macros/test_render.py:7 django.conf",
        "tests/engine/test_memo.py:5 the fixture lantern",
        "tests/helpers.py:1 presets.models",
    ]
