"""Ask before a destructive or bulk action (docs/presets.md#asking-first). A view that deletes or
changes many things at once calls `ask_first` after its permission check: a POST without
`confirmed=1` gets a page that names what the action affects and a button that sends the same form
again with `confirmed=1`, plus a way back. It needs no JavaScript; under htmx the question replaces
the page's main content (`HX-Retarget`), and its button is a plain form, so the answer is a page."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

CONFIRMED = "confirmed"


@dataclass(frozen=True, slots=True)
class Confirmation:
    """The question: what is asked, what it affects (one sentence each), the button's words and where
    "Keep it" goes back to."""

    question: str
    button: str
    back: str
    affects: list[str] = field(default_factory=list)


def ask_first(request: HttpRequest, confirmation: Confirmation) -> HttpResponse | None:
    """None when the POST was confirmed; else the page that asks (the action is not done)."""
    if request.POST.get(CONFIRMED) == "1":
        return None
    fields = [
        (name, value)
        for name in request.POST
        if name not in ("csrfmiddlewaretoken", CONFIRMED)
        for value in request.POST.getlist(name)
    ]
    context = {"confirmation": confirmation, "fields": fields, "action": request.get_full_path()}
    if getattr(request, "htmx", False):
        response = render(request, "confirm.html#question", context)
        response["HX-Retarget"] = "#main"
        response["HX-Reswap"] = "innerHTML show:top"
        return response
    return render(request, "confirm.html", context)
