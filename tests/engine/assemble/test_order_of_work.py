"""The order of work docs/assembly.md#order-of-work gives is the order the assembler runs."""

from __future__ import annotations

import re
from pathlib import Path

from engine.assemble import STEPS

PAGE = Path(__file__).resolve().parents[3] / "docs" / "assembly.md"


def documented_steps() -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("## Order of work\n", 1)[1].split("\n## ", 1)[0]
    return [m.group(1).lower() for m in re.finditer(r"^\d+\. \*\*([^*]+)\*\*", section, re.MULTILINE)]


def test_the_page_lists_every_step_of_the_assembler_in_the_order_it_runs():
    assert documented_steps() == [step.name for step in STEPS]


def test_the_steps_have_distinct_names():
    names = [step.name for step in STEPS]
    assert len(set(names)) == len(names)
