"""A request's total regex work, bounded (issue 25).

Each call into the engine is bounded on its own (`RUN_LIMIT_SECONDS`), but a request may run many
scripts over many texts. A `RegexBudget` is shared by every regex step of one request (an assembly's
history and World Info passes, or one cleaning call): once the CPU time this thread spent in them
passes the limit, the remaining scripts are skipped and reported, each naming the budget. A run
already in flight finishes within its own bound, so a request overshoots by at most one run.

The default comes from the `REGEX_REQUEST_BUDGET_MS` setting (250 ms of CPU), set once at startup
through `set_default_budget_ms` (the engine reads no settings itself).
"""

from __future__ import annotations

import time

_default_ms = 250.0


def set_default_budget_ms(ms: float) -> None:
    """The limit new budgets get (the web process sets it from `REGEX_REQUEST_BUDGET_MS`)."""
    global _default_ms
    _default_ms = float(ms)


def default_budget_ms() -> float:
    return _default_ms


class RegexBudget:
    """CPU time spent on one request's regex scripts, against a limit in milliseconds."""

    __slots__ = ("limit_ms", "spent")

    def __init__(self, limit_ms: float | None = None) -> None:
        self.limit_ms = _default_ms if limit_ms is None else float(limit_ms)
        self.spent = 0.0  # seconds of thread CPU time

    def exhausted(self) -> bool:
        return self.spent * 1000 >= self.limit_ms

    def charge(self, started: float) -> None:
        """Add the CPU time since `started` (a `time.thread_time()` reading)."""
        self.spent += time.thread_time() - started

    def skipped_message(self) -> str:
        return (
            f"Skipped: this request's regex budget (REGEX_REQUEST_BUDGET_MS = {self.limit_ms:g} ms of CPU) "
            "was spent by the scripts before it."
        )
