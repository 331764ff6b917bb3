"""`manage.py token`: create and revoke a server's bot tokens from the command line, audited as on
the tokens page (actor "cli").

    python manage.py token create --server ID --name NAME [--json]   → {"token": "…", "name": "…"}
    python manage.py token revoke --server ID --name NAME [--json]   → {"name": "…", "revoked": 1}

The plain token is printed once and never stored. Revoking by name revokes every live token of that
name on that server; a name with no live token is an error (exit 1).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.actors import CLI
from servers.models import ApiToken, Server
from servers.services import api_token_create, api_token_revoke


class Command(BaseCommand):
    help = "Create or revoke a server's API (bot) tokens."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        for name, what in (("create", "create a token"), ("revoke", "revoke the live tokens of a name")):
            action = actions.add_parser(name, help=what)
            action.add_argument("--server", type=int, required=True, help="the server (Discord guild) id")
            action.add_argument("--name", required=True, help="the token's name, e.g. bot")
            action.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        server = Server.objects.filter(pk=options["server"]).first()
        if server is None:
            raise CommandError(f"No server {options['server']}.")
        name = options["name"].strip()
        if not name:
            raise CommandError("--name must not be blank.")
        if options["action"] == "create":
            token, plain = api_token_create(server=server, name=name, by=CLI)
            result: dict[str, Any] = {"token": plain, "name": token.name}
            text = f"Token {token.name!r} for server {server.pk} (shown once): {plain}"
        else:
            live = list(ApiToken.objects.filter(server=server, name=name, revoked_at__isnull=True))
            if not live:
                raise CommandError(f"Server {server.pk} has no live token named {name!r}.")
            for token in live:
                api_token_revoke(token=token, by=CLI)
            result = {"name": name, "revoked": len(live)}
            text = f"Revoked {len(live)} token{'s' if len(live) != 1 else ''} named {name!r} on server {server.pk}."
        self.stdout.write(json.dumps(result) if options["json"] else text)
