"""`manage.py group create --server S --name N --members "A,B,C" [--muted "C"]
[--mode swap|join_exclude_muted|join_include_muted] [--join-prefix T] [--join-suffix T]
[--strategy natural|list|pooled|manual] [--allow-self-responses] [--replace] --json`,
`manage.py group list|show|delete --server S [--name N] --json` and
`manage.py group channel --server S --channel ID (--name N | --clear) --json` (docs/groups.md).

The contract (acceptance checks use it): success prints one JSON object and exits 0; an unknown
member, an empty member list, a muted name that is not a member, a name clash without --replace, an
unknown group or server prints ONE line starting `error: ` on stderr and exits 2, and nothing is
stored. Never a traceback.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandParser

from core.actors import CLI
from core.json_command import JsonCommand, RefusingParser, add_json, add_server
from engine.groups import GENERATION_MODES, STRATEGIES
from groups import selectors, services
from servers.models import Server


class Command(JsonCommand):
    help = "Create, list, show or delete a server's group chats, or give a channel a group, as JSON."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, parser_class=RefusingParser)
        create = actions.add_parser("create", help="Create a group (or replace one with --replace).")
        add_server(create)
        create.add_argument("--name", required=True, help="The group's name.")
        create.add_argument(
            "--members", required=True, help="The members: card names, comma-separated, in order."
        )
        create.add_argument("--muted", default="", help="Muted members (comma-separated), among --members.")
        create.add_argument("--mode", choices=GENERATION_MODES, default="swap", help="The generation mode.")
        create.add_argument(
            "--join-prefix", default="", help="Text before each member's field in join modes."
        )
        create.add_argument("--join-suffix", default="", help="Text after each member's field in join modes.")
        create.add_argument("--strategy", choices=STRATEGIES, default="natural", help="Who speaks next.")
        create.add_argument(
            "--allow-self-responses", action="store_true", help="A member may answer its own message."
        )
        create.add_argument("--replace", action="store_true", help="Replace the group of that name.")
        add_json(create)
        listing = actions.add_parser("list", help="List a server's groups.")
        add_server(listing)
        add_json(listing)
        for action, text in (("show", "Show one group."), ("delete", "Delete one group.")):
            one = actions.add_parser(action, help=text)
            add_server(one)
            one.add_argument("--name", required=True, help="The group's name.")
            add_json(one)
        channel = actions.add_parser("channel", help="Make a channel use a group, or clear it.")
        add_server(channel)
        channel.add_argument("--channel", type=int, required=True, help="The channel or thread id.")
        choice = channel.add_mutually_exclusive_group(required=True)
        choice.add_argument("--name", help="The group's name.")
        choice.add_argument("--clear", action="store_true", help="Use the server's character again.")
        add_json(channel)

    def run(self, options: dict[str, Any]) -> Any:
        server_id = options["server"]
        action = options["action"]
        if action == "list":
            names = [row.name for row in selectors.groups_for(server_id)]
            return {"groups": [self._shown(server_id, name) for name in names]}
        server = Server.objects.filter(pk=server_id).first()
        if server is None:
            raise services.GroupError(f"There is no server with id {server_id}.")
        if action == "create":
            row = services.group_save(
                server=server,
                name=options["name"],
                members=_names(options["members"]),
                muted=_names(options["muted"]),
                mode=options["mode"],
                join_prefix=options["join_prefix"],
                join_suffix=options["join_suffix"],
                strategy=options["strategy"],
                allow_self_responses=options["allow_self_responses"],
                replace=options["replace"],
                by=CLI,
            )
            return self._shown(server_id, row.name)
        if action == "channel":
            return self._channel(server, options)
        found = selectors.group_named(server_id, options["name"].strip())
        if found is None:
            raise services.GroupError(f"This server has no group named “{options['name'].strip()}”.")
        if action == "delete":
            services.group_delete(group=found, by=CLI)
            return {"deleted": found.name}
        return self._shown(server_id, found.name)

    def _shown(self, server_id: int, name: str) -> selectors.GroupJson:
        loaded = selectors.loaded_group(server_id, name)
        if loaded is None:  # deleted between the listing and this read
            raise services.GroupError(f"This server has no group named “{name}”.")
        return selectors.group_json(loaded)

    def _channel(self, server: Server, options: dict[str, Any]) -> dict[str, Any]:
        group = None
        if not options["clear"]:
            group = selectors.group_named(server.pk, options["name"].strip())
            if group is None:
                raise services.GroupError(f"This server has no group named “{options['name'].strip()}”.")
        services.channel_group_set(server=server, channel_id=options["channel"], group=group, by=CLI)
        return {"channel": str(options["channel"]), "group": None if group is None else group.name}


def _names(text: str) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]
