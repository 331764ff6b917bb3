"""A view that answers htmx with a partial and a browser with a page says so to caches.

The same URL gives two bodies depending on the `HX-Request` header, so every view that reads
`request.htmx` (itself, or through a helper of its module that does) carries
`vary_on_headers("HX-Request")`; without it a shared cache or the browser's back button can hand a
partial to a full page load (docs/architecture.md#conventions).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIPPED = {".venv", ".git", "tests", "node_modules", "var", "staticfiles"}


def _reads_htmx(function: ast.FunctionDef) -> bool:
    return any(isinstance(node, ast.Attribute) and node.attr == "htmx" for node in ast.walk(function))


def _calls(function: ast.FunctionDef) -> set[str]:
    return {
        node.func.id
        for node in ast.walk(function)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }


def _varies(function: ast.FunctionDef) -> bool:
    return any("vary_on_headers" in ast.unparse(decorator) for decorator in function.decorator_list)


def views_without_vary(root: Path) -> list[str]:
    """Public functions of every views module that answer htmx differently and do not vary on it."""
    found = []
    for path in sorted(root.rglob("views*.py")):  # views.py, and a split-off views_preview.py
        if SKIPPED & set(path.relative_to(root).parts):
            continue
        functions = {
            node.name: node for node in ast.parse(path.read_text()).body if isinstance(node, ast.FunctionDef)
        }
        readers = {name for name, function in functions.items() if _reads_htmx(function)}
        while True:  # a helper that calls a helper that reads the header reads it too
            more = {name for name, function in functions.items() if _calls(function) & readers} - readers
            if not more:
                break
            readers |= more
        found += [
            f"{path.relative_to(root)}:{functions[name].lineno} {name}"
            for name in sorted(readers)
            if not name.startswith("_") and not _varies(functions[name])
        ]
    return found


def test_every_view_that_answers_htmx_differently_varies_on_its_header():
    assert views_without_vary(ROOT) == []


def test_the_check_sees_a_view_bob_leaves_without_vary_even_through_a_helper(tmp_path):
    app = tmp_path / "shelf"
    app.mkdir()
    (app / "views.py").write_text(
        "from django.views.decorators.vary import vary_on_headers\n"
        "def _answer(request):\n"
        "    return 'row' if request.htmx else 'page'\n"
        "@vary_on_headers('HX-Request')\n"
        "def careful(request):\n"
        "    return _answer(request)\n"
        "def careless(request):\n"
        "    return _answer(request)\n"
        "def plain(request):\n"
        "    return 'page'\n"
    )
    (app / "views_editor.py").write_text(
        "def editor(request):\n    if request.htmx:\n        return 'node'\n    return 'page'\n"
    )
    assert views_without_vary(tmp_path) == ["shelf/views.py:7 careless", "shelf/views_editor.py:1 editor"]
