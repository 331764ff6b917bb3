"""The tools a model calls in a channel, carried out by the server (docs/groups.md#a-shared-workspace):

    POST /api/v1/servers/<id>/channels/<channel>/tools/<tool name>   body: the tool's arguments
    → 200 {"result": …}   (the bot hands the result back to the model as the tool's answer)

The route knows no tool itself: each is a `ChannelTool` an app adds to `CHANNEL_TOOLS` from its
`AppConfig.ready()` (the `core.hooks` pattern), so the tools of a higher app (groups: the Author's
Note and dice) and of a lower one (conversations) share one route, one body check and one error
shape. A tool declares the fields it reads (any other is a 400 naming it) and a `run` that gets the
call and returns the JSON-able result, raising a `UserError` (a 400 with its sentence) when the call
cannot be done; it writes its own audit event.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest, HttpResponse

from core.actors import Agent
from core.errors import UserError
from core.hooks import Hook

from .api_auth import ApiError, api_view, json_response, read_json_body, refuse_unknown_fields, token_agent

MAX_BODY_BYTES = 16 * 1024  # every tool's arguments are a few short texts
MAX_CHANNEL_ID = 2**63 - 1


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call: the server and channel of the route, the tool's arguments (a JSON object whose
    fields the tool declared) and the actor the audit log names (the bot's token)."""

    server_id: int
    channel_id: int
    arguments: dict[str, Any]
    by: Agent


@dataclass(frozen=True, slots=True)
class ChannelTool:
    name: str
    fields: tuple[str, ...]  # the argument fields it reads; any other is refused
    run: Callable[[ToolCall], Any]


CHANNEL_TOOLS: Hook[ChannelTool] = Hook("servers.channel_tools.CHANNEL_TOOLS")


def tool_named(name: str) -> ChannelTool | None:
    return next((tool for tool in CHANNEL_TOOLS if tool.name == name), None)


@api_view
def channel_tool(request: HttpRequest, server_id: int, channel_id: int, tool_name: str) -> HttpResponse:
    tool = tool_named(tool_name)
    if tool is None:
        known = ", ".join(sorted(t.name for t in CHANNEL_TOOLS))
        raise ApiError(f"There is no tool named “{tool_name[:100]}”: the tools are {known}.", 404)
    if request.method != "POST":
        raise ApiError("Use POST with the tool's arguments as the body.", 405)
    if not 0 < channel_id <= MAX_CHANNEL_ID:
        raise ApiError("The channel must be a Discord id: a positive whole number.")
    body = read_json_body(request, max_bytes=MAX_BODY_BYTES)
    if not isinstance(body, dict):
        raise ApiError("The request body must be a JSON object: the tool's arguments.")
    refuse_unknown_fields(body, tool.fields, where=f"the arguments of {tool.name}")
    call = ToolCall(server_id=server_id, channel_id=channel_id, arguments=body, by=token_agent(request))
    try:
        result = tool.run(call)
    except ApiError:
        raise
    except UserError as exc:
        raise ApiError(exc.message) from None
    return json_response({"result": result})
