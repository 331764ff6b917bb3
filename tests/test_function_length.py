"""No function of the product, the engine or the example bot runs over 80 lines (docs/architecture.md,
"Conventions"): a longer one is split into pieces named for what they do."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from tests.test_architecture import APPS

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 80
WALKED = (*APPS, "examples")


def long_functions(root: Path, tops: tuple[str, ...], limit: int = MAX_LINES) -> list[str]:
    """Every function (method, nested function) whose `def` line to last line spans more than
    `limit` lines, migrations aside."""
    found = []
    for top in tops:
        for path in sorted((root / top).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            functions = [
                node
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            ]
            for node in sorted(functions, key=lambda function: function.lineno):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > limit:
                    found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_runs_over_80_lines():
    found = long_functions(ROOT, WALKED)
    assert found == [], "split these into pieces named for what they do:\n" + "\n".join(found)


def test_the_check_flags_what_bob_plants(tmp_path):
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "migrations").mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(79))
    nested = textwrap.indent(body, "    ")
    (tmp_path / "engine" / "long.py").write_text(
        f"def fits():\n{body}\n"  # 80 lines with its def
        f"class Shelf:\n    async def grows(self):\n{nested}        pass\n\n"  # a method, 81 lines
        f"def outer():\n    def inner():\n{nested}        pass\n    return inner\n",
        encoding="utf-8",
    )
    (tmp_path / "engine" / "migrations" / "0001_initial.py").write_text(f"def old():\n{body * 2}")

    assert long_functions(tmp_path, ("engine",)) == [
        "engine/long.py:83 grows (81 lines)",
        "engine/long.py:165 outer (83 lines)",
        "engine/long.py:166 inner (81 lines)",
    ]
