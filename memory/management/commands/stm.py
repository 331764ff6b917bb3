"""`manage.py stm add|settings|review`: store entries, change privacy/opt-in, and print the
contributor's verdicts and items for a turn (the same function the assembler calls)."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import timedelta
from decimal import Decimal, InvalidOperation
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from core.actors import CLI
from core.errors import REFUSALS, UserError
from core.json_command import refuse
from engine import StmContext
from memory import services
from memory.models import MAX_MESSAGES
from memory.selectors import consenting_servers, load_stm
from servers.models import Server

SNOWFLAKE_MAX = 2**63 - 1


class UsageError(UserError):
    """A bad command line: reported as one `error: ` line, exit status 2."""


def fail(message: str) -> NoReturn:
    """Report one `error: ` line on stderr and exit with status 2 (the CLI's error contract)."""
    sys.stderr.write(f"error: {message}\n")
    sys.exit(2)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        fail(message)


def snowflake(text: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a Discord id (a positive whole number)") from None
    if not 0 < value <= SNOWFLAKE_MAX:
        raise argparse.ArgumentTypeError(f"{text!r} is out of range for a Discord id")
    return value


def hours(text: str) -> Decimal:
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of hours") from None
    if not value.is_finite() or value < 0 or value > 100_000:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of hours between 0 and 100000")
    return value


def count(text: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError("the number of messages cannot be negative")
    return value


def on_off(text: str) -> bool:
    if text.strip().lower() in {"on", "true", "yes", "1"}:
        return True
    if text.strip().lower() in {"off", "false", "no", "0"}:
        return False
    raise argparse.ArgumentTypeError(f"{text!r}: use on or off")


class Command(BaseCommand):
    help = "Short-term memory: add an entry, change privacy settings, review what a turn would see."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.error = fail  # type: ignore[method-assign]
        return parser

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        commands = parser.add_subparsers(dest="action", parser_class=_Parser)

        add = commands.add_parser(
            "add", help="Store one entry (creates server, channel and user when missing)."
        )
        add.add_argument("--server", type=snowflake)
        add.add_argument("--channel", type=snowflake, required=True)
        add.add_argument("--parent", type=snowflake, help="The parent channel, when --channel is a thread.")
        add.add_argument("--private", action="store_true", help="Mark the channel private.")
        add.add_argument("--user", type=snowflake, required=True)
        add.add_argument("--summary", default="")
        add.add_argument(
            "--messages", type=count, default=0, help="How many synthetic messages (last 10 kept)."
        )
        add.add_argument("--age-hours", type=hours, default=Decimal(0), help="Hours since its last update.")
        add.add_argument(
            "--dm",
            action="store_true",
            help="A direct-message entry (stored by --server's bot, part of no guild).",
        )
        add.add_argument("--lineage", default="")

        settings = commands.add_parser("settings", help="Show or change the bypass and a user's opt-in.")
        settings.add_argument("--server", type=snowflake, required=True)
        settings.add_argument("--bypass", type=on_off)
        settings.add_argument("--user", type=snowflake)
        settings.add_argument("--opt-in", type=on_off, dest="opt_in")

        review = commands.add_parser("review", help="The verdicts and items for one turn.")
        review.add_argument("--server", type=snowflake, required=True)
        review.add_argument("--channel", type=snowflake, required=True)
        review.add_argument("--user", type=snowflake, required=True)
        review.add_argument("--parent", type=snowflake)
        review.add_argument("--has-tools", action="store_true")
        review.add_argument("--provider", default="")
        review.add_argument("--long-term-intent", action="store_true")
        review.add_argument("--lineage", default="")
        review.add_argument("--json", action="store_true")

    def execute(self, *args: Any, **options: Any) -> str | None:
        try:
            return super().execute(*args, **options)
        except REFUSALS as exc:
            refuse(exc)

    def handle(self, *args: Any, **options: Any) -> None:
        action = options.get("action")
        if action == "add":
            self._add(options)
        elif action == "settings":
            self._settings(options)
        elif action == "review":
            self._review(options)
        else:
            raise UsageError("choose one of: add, settings, review")

    def _add(self, options: dict[str, Any]) -> None:
        dm = options["dm"]
        if dm and (options["private"] or options["parent"]):
            raise UsageError("--private and --parent do not apply to a direct message (--dm)")
        if options["server"] is None:
            raise UsageError("--server is required (with --dm: the server whose bot stored the DM)")
        _server(options["server"], create=True)
        if options["parent"] == options["channel"]:
            raise UsageError("a channel cannot be its own parent")
        updated_at = timezone.now() - timedelta(seconds=float(options["age_hours"] * 3600))
        entry = services.stm_put_entry(
            server_id=options["server"],
            dm=dm,
            channel_id=options["channel"],
            parent_id=options["parent"],
            private=True if options["private"] else None,
            user_id=options["user"],
            summary=options["summary"],
            messages=_synthetic_messages(options["messages"]),
            lineage=options["lineage"],
            updated_at=updated_at,
        )
        self.stdout.write(
            json.dumps(
                {
                    "entry": entry.pk,
                    "server": entry.server_id,
                    "channel": entry.channel.discord_id,
                    "user": entry.user_id,
                    "messages": len(entry.messages),
                    "summary": entry.summary,
                    "updated_at": entry.updated_at.isoformat(),
                }
            )
        )

    def _settings(self, options: dict[str, Any]) -> None:
        server = _server(options["server"], create=True)
        if options["opt_in"] is not None and options["user"] is None:
            raise UsageError("--opt-in needs --user")
        if options["bypass"] is not None:
            services.server_set_privacy_bypass(server=server, bypass=options["bypass"], by=CLI)
        result: dict[str, Any] = {"server": server.pk, "stm_privacy_bypass": server.stm_privacy_bypass}
        if options["user"] is not None:
            if options["opt_in"] is not None:
                services.user_set_opt_in(
                    user_id=options["user"], opt_in=options["opt_in"], server=server, by=CLI
                )
            else:
                services.user_ensure(user_id=options["user"])
            consented = server.pk in consenting_servers(options["user"])
            result |= {"user": options["user"], "cross_server_opt_in": consented}
        self.stdout.write(json.dumps(result))

    def _review(self, options: dict[str, Any]) -> None:
        _server(options["server"], create=False)
        context = StmContext(
            channel=options["channel"],
            user=options["user"],
            parent_channel=options["parent"],
            lineage=options["lineage"],
            has_tools=options["has_tools"],
            provider=options["provider"],
            long_term_intent=options["long_term_intent"],
        )
        loaded = load_stm(
            server_id=options["server"],
            context=context,
            now=timezone.now(),
            include_expired=True,
            with_rows=True,
        )
        result = loaded.contribution
        report: dict[str, Any] = {
            "entries": [
                {
                    "channel": v.channel,
                    "verdict": v.verdict,
                    "server": v.server_id,
                    "entry": v.entry_id,
                    "user": loaded.entries[v.entry_id].user_id,
                    "updated_at": loaded.entries[v.entry_id].updated_at.isoformat(),
                }
                for v in result.verdicts
            ],
            "items": [{"role": item.role, "text": item.text} for item in result.items],
            "tail_directive": result.tail_directive,
        }
        if options["json"]:
            self.stdout.write(json.dumps(report, ensure_ascii=False))
            return
        for entry in report["entries"]:
            self.stdout.write(f"{entry['verdict']:<24} channel {entry['channel']} (server {entry['server']})")
        for item in report["items"]:
            self.stdout.write(f"[{item['role']}] {item['text']}")
        if result.tail_directive:
            self.stdout.write(f"[tail] {result.tail_directive}")


def _server(server_id: int, *, create: bool) -> Server:
    if create:
        server, _ = Server.objects.get_or_create(pk=server_id, defaults={"name": f"Server {server_id}"})
        return server
    found = Server.objects.filter(pk=server_id).first()
    if found is None:
        raise UsageError(f"no server {server_id}")
    return found


def _synthetic_messages(n: int) -> list[dict[str, str]]:
    """The last (at most 10) of `n` alternating user/assistant messages, one minute apart."""
    start = timezone.now() - timedelta(minutes=n)
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "name": "Someone" if i % 2 == 0 else "Bot",
            "content": f"Synthetic message {i + 1}.",
            "timestamp": (start + timedelta(minutes=i)).isoformat(),
        }
        for i in range(max(0, n - MAX_MESSAGES), n)
    ]
