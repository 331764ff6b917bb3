"""The engine's rooms (docs/architecture.md, "The engine"): the assembler's step modules live in
`engine/assemble/`, and the engine's packages do not import each other in a loop.

A top-level engine module that only the assembler imports is one of its steps: it belongs in the
assembler's room, where the next reader looks for it. The packages (and top-level modules) of the
engine form a graph without loops, type-only imports included: a loop is what made buckets and the
groups' model import single modules to get round one another.
"""

from __future__ import annotations

from pathlib import Path

from .test_architecture import MODULES, _imports, _strongly_connected

ASSEMBLER = "engine.assemble"
ENGINE_FACE = "engine"  # the package face imports every room; callers outside read it


def _unit(module: str) -> str:
    """The engine package (or top-level module) a module belongs to: `engine.groups.model` → `engine.groups`."""
    return ".".join(module.split(".")[:2])


def _engine_edges(modules: dict[str, Path]) -> list[tuple[str, str]]:
    """(importer, imported) for every import between two engine modules, type-only ones too."""
    return [
        (name, target)
        for name, path in modules.items()
        if name.startswith("engine.")
        for target, _stmt, _inside in _imports(name, path)
        if target in modules and target.startswith("engine.")
    ]


def steps_outside_the_assembler(modules: dict[str, Path]) -> list[str]:
    """Top-level engine modules that the assembler imports and nothing outside it does."""
    importers: dict[str, set[str]] = {}
    for name, path in modules.items():
        for target, _stmt, _inside in _imports(name, path):
            if target in modules:
                importers.setdefault(target, set()).add(name)
    found = []
    for name, path in modules.items():
        parts = name.split(".")
        if parts[0] != "engine" or len(parts) != 2 or path.name == "__init__.py":
            continue
        users = {user for user in importers.get(name, set()) if user != name}
        if users and all(_unit(user) == ASSEMBLER for user in users):
            found.append(name)
    return sorted(found)


def package_loops(modules: dict[str, Path]) -> list[list[str]]:
    """The loops among the engine's packages and top-level modules (its face, `engine`, aside)."""
    graph: dict[str, set[str]] = {}
    for name, target in _engine_edges(modules):
        here, there = _unit(name), _unit(target)
        if ENGINE_FACE in (here, there):
            continue
        graph.setdefault(here, set())
        graph.setdefault(there, set())
        if here != there:
            graph[here].add(there)
    return [component for component in _strongly_connected(graph) if len(component) > 1]


def test_every_assembler_step_module_is_in_the_assemblers_room():
    outside = steps_outside_the_assembler(MODULES)
    assert outside == [], (
        f"modules only the assembler uses, outside engine/assemble/ (move them in): {outside}"
    )


def test_no_two_engine_packages_import_each_other_even_through_a_third():
    loops = package_loops(MODULES)
    assert loops == [], f"import loops among the engine's packages: {loops}"


def _tree(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    modules = {}
    for relative, text in files.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        parts = relative.removesuffix(".py").split("/")
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def test_the_room_check_sees_a_step_bob_leaves_at_the_top_of_the_engine(tmp_path):
    modules = _tree(
        tmp_path,
        {
            "engine/__init__.py": "from .assemble import assemble\nfrom .parts import Part\n",
            "engine/assemble/__init__.py": "from .pipeline import assemble\n",
            "engine/assemble/pipeline.py": "from ..summaries import summarise\nfrom ..parts import Part\n",
            "engine/summaries.py": "from .parts import Part\n",  # only the assembler uses it: a step
            "engine/parts.py": "class Part: ...\n",  # the face and the packages use it too: shared
            "engine/worldinfo/__init__.py": "from ..parts import Part\n",
        },
    )
    assert steps_outside_the_assembler(modules) == ["engine.summaries"]


def test_the_loop_check_sees_buckets_groups_and_cards_reading_each_other(tmp_path):
    modules = _tree(
        tmp_path,
        {
            "engine/buckets.py": "from .groups.model import GroupTurn\n",
            "engine/groups/__init__.py": "from .model import GroupTurn\n",
            "engine/groups/model.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..cards.card import Card\n"
            ),
            "engine/cards/__init__.py": "from .apply import fill\n",
            "engine/cards/apply.py": "from engine.buckets import BucketDocument\n",
            "engine/cards/card.py": "class Card: ...\n",
            "engine/parts.py": "class Part: ...\n",
            "engine/worldinfo/__init__.py": "from ..parts import Part\n",
        },
    )
    assert package_loops(modules) == [["engine.buckets", "engine.cards", "engine.groups"]]
