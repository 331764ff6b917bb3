"""The channel tool the conversations app carries out (docs/channels.md#recall), added to the channel
tool route's registry (`servers.channel_tools.CHANNEL_TOOLS`) from `ConversationsConfig.ready()`:

- `recall` {query}: the stored messages of this channel that best match the query.
"""

from __future__ import annotations

from typing import Any

from servers.channel_tools import ChannelTool, ToolCall

from . import selectors, services


def recall(call: ToolCall) -> dict[str, Any]:
    query = call.arguments.get("query")
    if not isinstance(query, str) or not query.strip():
        raise services.ChannelError(
            "`query` must be the words to look for in this channel's earlier messages."
        )
    if len(query) > selectors.RECALL_QUERY_MAX_CHARS:
        raise services.ChannelError(f"`query` has at most {selectors.RECALL_QUERY_MAX_CHARS} characters.")
    found = selectors.recall(call.server_id, call.channel_id, query)
    services.recall_record(
        server_id=call.server_id, channel_id=call.channel_id, query=query, found=len(found), by=call.by
    )
    return {"messages": found, "channel": str(call.channel_id)}


TOOLS = (ChannelTool(name="recall", fields=("query",), run=recall),)
