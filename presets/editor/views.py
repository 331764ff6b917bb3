"""The preset editor pages: open, edit, add, duplicate, delete and move nodes (drag and drop,
keyboard, or move buttons without JavaScript).

Admins write (Action.MANAGE_PRESETS). Every write is one service call; a stale edit gets the
conflict page with the changes made since, and the admin's own edit kept in the form.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from core.errors import REFUSALS
from engine import GENERATION_TYPES, ROLES, editing
from servers.confirm import Confirmation, ask_first
from servers.models import Server
from servers.permissions import Action, get_server_for, user_can
from servers.users import AuthenticatedHttpRequest

from .. import selectors
from ..lookups import posted_number, preset_or_404
from ..models import Preset, PresetNode
from ..services import PresetError
from ..versions.display import diff_view
from ..views import detail_context
from . import services as edit_services

NODE_ROW = "presets/_node_row.html"
NODE_OPEN = "presets/_node_open.html"


# --- node edits -------------------------------------------------------------------------------
# With htmx the editor works row by row: a node opens in place (its text, or its form for admins),
# a save, toggle, move, copy or delete answers only the rows it changed plus the page's counts out
# of band. Without JavaScript every form posts and redirects back to the editor, as before.


@login_required
@vary_on_headers("HX-Request")
@require_GET
def node_view(
    request: AuthenticatedHttpRequest, server_id: int, preset_id: int, node_id: int
) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.READ_PRESETS)
    preset = preset_or_404(server, preset_id)
    node = _node_or_404(preset, node_id)
    if request.htmx:
        if request.GET.get("fold"):
            return render(request, NODE_ROW, _row_context(request, server, preset, node))
        return render(request, NODE_OPEN, _open_context(request, server, preset, node, _node_values(node)))
    return _node_form(request, server, preset, node, _node_values(node))


@login_required
@vary_on_headers("HX-Request")
@require_http_methods(["GET", "POST"])
def node_edit(
    request: AuthenticatedHttpRequest, server_id: int, preset_id: int, node_id: int
) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_PRESETS)
    preset = preset_or_404(server, preset_id)
    node = _node_or_404(preset, node_id)
    values = _node_values(node)
    if request.method == "POST":
        values = _posted_values(request.POST, marker=node.kind == "marker")
        try:
            result = edit_services.node_update(
                preset=preset,
                node_id=node.pk,
                values=values,
                base_version=posted_number(request.POST.get("version")),
                by=request.user,
            )
        except edit_services.PresetConflict as exc:
            if request.htmx:
                context = _open_context(
                    request, server, preset, node, values, error=exc.message, conflict=exc
                )
                return _in_place(
                    request, server, preset, render_to_string(NODE_OPEN, context, request=request)
                )
            return _conflict(request, server, preset, exc, form_node=node, values=values)
        except REFUSALS as exc:
            if request.htmx:  # htmx swaps only 2xx answers: the error shows in the open node
                context = _open_context(request, server, preset, node, values, error=exc.message)
                return render(request, NODE_OPEN, context)
            return _node_form(request, server, preset, node, values, error=exc.message, status=400)
        text = (
            f"Saved “{values.get('name') or node.name}” as version {result.version}."
            if result.changed
            else f"Nothing to save: “{values.get('name') or node.name}” is as it was (still version {result.version})."
        )
        if request.htmx:
            return _in_place(request, server, preset, _rows(request, server, preset, [node.pk]), text, result)
        _report(request, text, result)
        return _back_to_node(server, preset, node.pk)
    return _node_form(request, server, preset, node, values)


@login_required
@vary_on_headers("HX-Request")
@require_http_methods(["GET", "POST"])
def node_add(request: AuthenticatedHttpRequest, server_id: int, preset_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_PRESETS)
    preset = preset_or_404(server, preset_id)
    if request.htmx and request.method == "GET":
        if request.GET.get("cancel"):
            return HttpResponse("")
        return render(request, NODE_OPEN, _open_context(request, server, preset, None, _new_values()))
    after = posted_number(request.POST.get("after") or request.GET.get("after"))
    values = _new_values()
    if request.method == "POST":
        values = _posted_values(request.POST, marker=False)
        try:
            result = edit_services.node_add(
                preset=preset,
                values=values,
                after_id=after,
                base_version=None,
                by=request.user,
            )
        except REFUSALS as exc:
            if request.htmx:
                return render(
                    request,
                    NODE_OPEN,
                    _open_context(request, server, preset, None, values, error=exc.message),
                )
            return _node_form(
                request, server, preset, None, values, error=exc.message, status=400, after=after
            )
        text = f"Added “{values.get('name') or 'New prompt'}” (version {result.version})."
        if request.htmx and result.node_id:
            return _in_place(
                request, server, preset, _rows(request, server, preset, [result.node_id]), text, result
            )
        _report(request, text, result)
        return _back_to_node(server, preset, result.node_id)
    return _node_form(request, server, preset, None, values, after=after)


@login_required
@vary_on_headers("HX-Request")
@require_POST
def node_duplicate(
    request: AuthenticatedHttpRequest, server_id: int, preset_id: int, node_id: int
) -> HttpResponse:
    return _node_action(
        request,
        server_id,
        preset_id,
        node_id,
        lambda preset, node, base: edit_services.node_duplicate(
            preset=preset, node_id=node.pk, base_version=base, by=request.user
        ),
        lambda node, result: f"Duplicated “{node.name}” (version {result.version}).",
        lambda preset, node, result: [node.pk, *([result.node_id] if result.node_id else [])],
    )


@login_required
@vary_on_headers("HX-Request")
@require_POST
def node_delete(
    request: AuthenticatedHttpRequest, server_id: int, preset_id: int, node_id: int
) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_PRESETS)
    preset = preset_or_404(server, preset_id)
    node = _node_or_404(preset, node_id)
    asked = ask_first(
        request,
        Confirmation(
            question=f"Delete the node “{node.name or node.identifier}” from “{preset.name}”?",
            button="Delete the node",
            back=reverse("presets:detail", args=[server.id, preset.pk]) + f"#node-{node.pk}",
            affects=[f"Versions can roll this back: version {preset.version} still has it."],
        ),
    )
    if asked:
        return asked
    return _node_action(
        request,
        server_id,
        preset_id,
        node_id,
        lambda preset, node, base: edit_services.node_delete(
            preset=preset, node_id=node.pk, base_version=base, by=request.user
        ),
        lambda node, result: (
            f"Deleted “{node.name}” (version {result.version}); roll back to version "
            f"{result.version - 1} to bring it back."
        ),
        lambda preset, node, result: [],
    )


@login_required
@vary_on_headers("HX-Request")
@require_POST
def node_move(
    request: AuthenticatedHttpRequest, server_id: int, preset_id: int, node_id: int
) -> HttpResponse:
    steps = -1 if request.POST.get("direction") == "up" else 1
    return _node_action(
        request,
        server_id,
        preset_id,
        node_id,
        lambda preset, node, base: edit_services.node_move(
            preset=preset, node_id=node.pk, steps=steps, base_version=base, by=request.user
        ),
        lambda node, result: f"Moved “{node.name}” {'up' if steps < 0 else 'down'}.",
        lambda preset, node, result: _swapped_pair(preset, node.pk, steps),
    )


@login_required
@vary_on_headers("HX-Request")
@require_POST
def nodes_reorder(request: AuthenticatedHttpRequest, server_id: int, preset_id: int) -> HttpResponse:
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_PRESETS)
    preset = preset_or_404(server, preset_id)
    order = [posted_number(value) for value in request.POST.getlist("order")]
    try:
        if None in order:
            raise PresetError("The new order must list node ids.")
        edit_services.nodes_reorder(
            preset=preset,
            order=_whole_order(preset, [value for value in order if value is not None]),
            base_version=posted_number(request.POST.get("version")),
            by=request.user,
        )
    except edit_services.PresetConflict as exc:
        return _conflict(request, server, preset, exc)
    except REFUSALS as exc:
        if request.htmx:
            return HttpResponse(exc.message, status=400)
        messages.error(request, exc.message)
    if request.htmx:
        return _node_list(request, server, preset)
    return _back_to_node(server, preset, None)


# --- helpers ----------------------------------------------------------------------------------


def _whole_order(preset: Preset, order: list[int]) -> list[int]:
    """The whole preset's order from a page's: a big preset's list shows a page of its nodes, so a
    drag reorders those nodes among the places they hold, and every other node stays where it is.
    An order naming every node (or any other id) is passed on as it came, for the service to judge."""
    current = list(PresetNode.objects.filter(preset=preset).order_by("position").values_list("pk", flat=True))
    places = {pk: index for index, pk in enumerate(current)}
    if len(order) >= len(current) or len(set(order)) != len(order) or any(pk not in places for pk in order):
        return order
    whole = list(current)
    for place, pk in zip(sorted(places[pk] for pk in order), order, strict=True):
        whole[place] = pk
    return whole


def _node_or_404(preset: Preset, node_id: int) -> PresetNode:
    node = PresetNode.objects.filter(preset=preset, pk=node_id).first()
    if node is None:
        raise Http404("No such node.")
    return node


def _node_values(node: PresetNode) -> dict[str, Any]:
    return {name: getattr(node, name) for name in editing.EDITABLE_FIELDS}


def _posted_values(data: Any, *, marker: bool) -> dict[str, Any]:
    values: dict[str, Any] = {"name": data.get("name", "")}
    if marker:
        return values
    values.update(
        content=data.get("content", "").replace("\r\n", "\n"),
        role=data.get("role", ""),
        injection_position=data.get("injection_position", "0"),
        injection_depth=data.get("injection_depth", ""),
        injection_order=data.get("injection_order", ""),
        injection_trigger=[t for t in data.getlist("injection_trigger") if t in GENERATION_TYPES],
        forbid_overrides=data.get("forbid_overrides") in ("1", "on", "true"),
    )
    return values


def _node_form(
    request: AuthenticatedHttpRequest,
    server: Server,
    preset: Preset,
    node: PresetNode | None,
    values: dict[str, Any],
    *,
    error: str | None = None,
    status: int = 200,
    after: int | None = None,
    conflict: Any = None,
) -> HttpResponse:
    preset.refresh_from_db(fields=["version"])
    context = {
        "server": server,
        "preset": preset,
        "node": node,
        "values": values,
        "error": error,
        "after": after,
        "roles": ROLES,
        "generation_types": GENERATION_TYPES,
        "conflict": conflict,
        "diff": diff_view(conflict.diff) if conflict is not None else None,
        "can_manage": user_can(request.user, server, Action.MANAGE_PRESETS),
    }
    return render(request, "presets/node_edit.html", context, status=status)


def _conflict(
    request: AuthenticatedHttpRequest,
    server: Server,
    preset: Preset,
    exc: edit_services.PresetConflict,
    *,
    form_node: PresetNode | None = None,
    values: dict[str, Any] | None = None,
) -> HttpResponse:
    if form_node is not None and values is not None:
        return _node_form(
            request, server, preset, form_node, values, error=exc.message, status=409, conflict=exc
        )
    context = {"server": server, "preset": preset, "conflict": exc, "diff": diff_view(exc.diff)}
    template = "presets/conflict.html#conflict" if request.htmx else "presets/conflict.html"
    return render(request, template, context, status=409)


def _node_action(
    request: AuthenticatedHttpRequest,
    server_id: int,
    preset_id: int,
    node_id: int,
    action: Callable[[Preset, PresetNode, int | None], edit_services.EditResult],
    message: Callable[[PresetNode, edit_services.EditResult], str],
    changed: Callable[[Preset, PresetNode, edit_services.EditResult], list[int]],
) -> HttpResponse:
    """The shape every one-button node edit shares: find, call one service, answer."""
    server = get_server_for(request.user, server_id, needs=Action.MANAGE_PRESETS)
    preset = preset_or_404(server, preset_id)
    node = _node_or_404(preset, node_id)
    try:
        result = action(preset, node, posted_number(request.POST.get("version")))
    except edit_services.PresetConflict as exc:
        return _conflict(request, server, preset, exc)
    except REFUSALS as exc:
        if request.htmx:
            return HttpResponse(exc.message, status=400)
        messages.error(request, exc.message)
        return _back_to_node(server, preset, node.pk)
    if request.htmx:
        # The answer replaces the node's row: the rows that now stand in its place, in order.
        ids = changed(preset, node, result)
        html = _rows(request, server, preset, ids)
        moved_neighbour = [pk for pk in ids if pk != node.pk and pk != result.node_id]
        html += "".join(f'<tr id="node-{pk}" hx-swap-oob="delete"></tr>' for pk in moved_neighbour)
        return _in_place(request, server, preset, html, message(node, result), result)
    _report(request, message(node, result), result)
    return _back_to_node(server, preset, getattr(result, "node_id", None) or node.pk)


def _node_list(request: AuthenticatedHttpRequest, server: Server, preset: Preset) -> HttpResponse:
    preset.refresh_from_db()
    context = detail_context(
        request, server, preset, filters={"q": "", "kind": ""}, page=request.POST.get("page")
    )
    return render(request, "presets/detail.html#node-list", context)


def _new_values() -> dict[str, Any]:
    return {
        "name": "",
        "content": "",
        "role": "system",
        "injection_position": 0,
        "injection_depth": 4,
        "injection_order": 100,
        "injection_trigger": [],
    }


def _row_context(
    request: AuthenticatedHttpRequest, server: Server, preset: Preset, node: PresetNode
) -> dict[str, Any]:
    node.encoding = server.token_encoding
    return {
        "server": server,
        "preset": preset,
        "node": node,
        "can_manage": user_can(request.user, server, Action.MANAGE_PRESETS),
        "filtered": False,
        "q": "",
        "kind": "",
    }


def _open_context(
    request: AuthenticatedHttpRequest,
    server: Server,
    preset: Preset,
    node: PresetNode | None,
    values: dict[str, Any],
    *,
    error: str | None = None,
    conflict: edit_services.PresetConflict | None = None,
) -> dict[str, Any]:
    context = (
        _row_context(request, server, preset, node)
        if node is not None
        else {
            "server": server,
            "preset": preset,
            "node": None,
            "can_manage": True,
            "filtered": False,
        }
    )
    preset.refresh_from_db(fields=["version"])
    return {
        **context,
        "label": (node.name or node.identifier) if node is not None else "New prompt",
        "values": values,
        "roles": ROLES,
        "generation_types": GENERATION_TYPES,
        "error": error,
        "conflict": conflict,
        "diff": diff_view(conflict.diff) if conflict is not None else None,
    }


def _rows(request: AuthenticatedHttpRequest, server: Server, preset: Preset, ids: list[int]) -> str:
    """The folded rows of these nodes, in the order given."""
    nodes = {node.pk: node for node in PresetNode.objects.filter(preset=preset, pk__in=ids)}
    return "".join(
        render_to_string(NODE_ROW, _row_context(request, server, preset, nodes[pk]), request=request)
        for pk in ids
        if pk in nodes
    )


def _swapped_pair(preset: Preset, node_id: int, steps: int) -> list[int]:
    """After a one-step move: the moved node and the neighbour it passed, in their new order."""
    order = list(PresetNode.objects.filter(preset=preset).order_by("position").values_list("pk", flat=True))
    index = order.index(node_id)
    if steps < 0:
        return [node_id, order[index + 1]] if index + 1 < len(order) else [node_id]
    return [order[index - 1], node_id] if index > 0 else [node_id]


def _in_place(
    request: AuthenticatedHttpRequest,
    server: Server,
    preset: Preset,
    html: str,
    status: str = "",
    result: edit_services.EditResult | None = None,
) -> HttpResponse:
    """Changed rows, then the page's counts, version line and status message out of band."""
    preset.refresh_from_db()
    context = {
        "server": server,
        "preset": preset,
        "counts": selectors.node_counts(preset),
        "enabled_tokens": selectors.enabled_tokens(preset, server.token_encoding),
        "oob": True,
    }
    html += render_to_string("presets/detail.html#preset-counts", context, request=request)
    html += render_to_string("presets/detail.html#node-meta", context, request=request)
    notes = [status, *(result.warnings if result else ())]
    html += render_to_string(
        "presets/detail.html#node-status", {"notes": [n for n in notes if n], "oob": True}, request=request
    )
    return HttpResponse(html)


def _report(request: AuthenticatedHttpRequest, text: str, result: edit_services.EditResult) -> None:
    messages.success(request, text)
    for warning in result.warnings:
        messages.warning(request, warning)


def _back_to_node(server: Server, preset: Preset, node_id: int | None) -> HttpResponse:
    url = reverse("presets:detail", args=[server.id, preset.pk])
    return redirect(f"{url}#node-{node_id}" if node_id else f"{url}#nodes")
