"""`manage.py assemble`: the exact messages the bot would send for a bucket document, as JSON.

    python manage.py assemble --server ID --buckets FILE [--preset NAME] [--native] [--channel ID]
        [--style merge|standalone] [--provider openai|anthropic|gemini] [--seed N]
        [--generation-type normal|continue|impersonate|swipe|regenerate|quiet] --json

Errors (unknown server or preset, unreadable file, bad bucket document): exit 2 and one line on
stderr starting `error: `; never a traceback.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from assembly.selectors import assemble_for_server
from core.errors import REFUSALS, UserError
from core.json_command import refuse
from engine import (
    ENCODINGS,
    GENERATION_TYPES,
    PROVIDERS,
    STYLES,
    AssemblyJson,
    decode_json,
    parse_buckets,
)
from presets.channels.selectors import thread_parent
from servers.models import Server


class _Failure(UserError):
    pass


class Command(BaseCommand):
    help = "Assemble a bucket document for a server and print the messages as JSON."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.error = self._argument_error  # type: ignore[method-assign]
        return parser

    def _argument_error(self, message: str) -> None:
        sys.stderr.write(f"error: {message}\n")
        sys.exit(2)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--server", type=int, required=True, help="The server (Discord guild) id.")
        parser.add_argument("--buckets", required=True, help="A bucket document (JSON file), '-' for stdin.")
        parser.add_argument("--preset", help="Assemble with this stored preset instead of the active one.")
        parser.add_argument("--native", action="store_true", help="Ignore presets: native assembly.")
        parser.add_argument(
            "--channel",
            type=int,
            help="The channel (or thread) the prompt is for: its own preset wins over the active one.",
        )
        parser.add_argument("--style", choices=STYLES, help="Depth-injection style (default: the preset's).")
        parser.add_argument("--provider", choices=PROVIDERS, help="Add that provider's request body.")
        parser.add_argument("--encoding", choices=ENCODINGS, help="The tokenizer (default: the server's).")
        parser.add_argument("--seed", type=int, help="The random seed (default: the document's, else drawn).")
        parser.add_argument(
            "--generation-type",
            choices=GENERATION_TYPES,
            help="The kind of turn (docs/assembly.md; default: the document's, else normal).",
        )
        parser.add_argument(
            "--json", action="store_true", help="Print one JSON object (the only output form)."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            result = self._run(options)
        except REFUSALS as exc:
            refuse(exc)
        except Exception as exc:  # the contract: one error line, never a traceback
            sys.stderr.write(
                f"error: assembly failed: {type(exc).__name__}: {exc}\n".replace("\n", " ") + "\n"
            )
            sys.exit(2)
        self.stdout.write(json.dumps(result, ensure_ascii=False, indent=None))

    def _run(self, options: dict[str, Any]) -> AssemblyJson:
        server_id = options["server"]
        if not Server.objects.filter(pk=server_id).exists():
            raise _Failure(f"There is no server with id {server_id}.")
        doc = parse_buckets(self._read_document(options["buckets"]))
        if options["generation_type"] is not None:
            doc = replace(doc, generation_type=options["generation_type"])
        seed = options["seed"]
        if seed is not None and seed < 0:
            raise _Failure("--seed must be a non-negative whole number.")
        try:
            assembly = assemble_for_server(
                server_id=server_id,
                doc=doc,
                preset_name=options["preset"],
                native=options["native"],
                style=options["style"],
                provider=options["provider"],
                seed=seed,
                encoding=options["encoding"],
                channel=options["channel"],
                parent_channel=_parent_of(server_id, options["channel"], doc),
            )
        except ValueError as exc:
            raise _Failure(str(exc)) from None
        return assembly.to_dict()

    def _read_document(self, path: str) -> Any:
        try:
            if path == "-":
                raw = sys.stdin.buffer.read()
            else:
                with open(path, "rb") as handle:
                    raw = handle.read()
        except OSError as exc:
            raise _Failure(f"cannot read the bucket file {path!r}: {exc.strerror or exc}.") from None
        return decode_json(raw, what="the bucket file")


def _parent_of(server_id: int, channel: int | None, doc: Any) -> int | None:
    """A thread's parent channel: from the document when it names that thread, else as the bot
    reported it (the command line may query; the API never does)."""
    if channel is None:
        return None
    context = doc.stm_context
    if context is not None and context.channel == channel and context.parent_channel is not None:
        return context.parent_channel
    return thread_parent(server_id, channel)
