"""The assembler (docs/assembly.md#order-of-work): `assemble` runs the named `STEPS` in order over one
`State` and returns an `Assembly`. Feature packages (World Info, groups, cards, regex, macros) never
import from here; the assembler calls them."""

from .pipeline import STEPS, Step, assemble, run
from .placing import SAMPLE_NOTE
from .result import Assembly, AssemblyJson, BudgetJson, StoredStm
from .state import Request, State

__all__ = [
    "SAMPLE_NOTE",
    "STEPS",
    "Assembly",
    "AssemblyJson",
    "BudgetJson",
    "Request",
    "State",
    "Step",
    "StoredStm",
    "assemble",
    "run",
]
