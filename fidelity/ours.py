"""Our side of a case, through the command-line contracts acceptance uses (`card import`, `lorebook
import`, `preset import --replace`, `lorebook settings`, `assemble --style standalone --provider
openai --json`), run in-process against whatever database Django is set up with."""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path
from typing import Any

from django.core.management import call_command

from .cases import Case

SEED = 1


class OursFailed(Exception):
    """A command refused the case's input; the message is its error line."""


def our_messages(case: Case, *, server_id: int) -> list[dict[str, Any]]:
    """The messages our `assemble` sends to OpenAI for the case, on a server of its own."""
    server = str(server_id)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        preset = folder / "preset.json"
        preset.write_text(json.dumps(case.preset_data(), ensure_ascii=False), encoding="utf-8")
        _run(
            "card", "import", str(case.path(case.card)), "--server", server, "--name", "fidelity", "--replace"
        )
        if case.lorebook:
            book = str(case.path(case.lorebook))
            _run("lorebook", "import", book, "--server", server, "--name", "fidelity-book", "--replace")
        _run("preset", "import", str(preset), "--server", server, "--name", "fidelity", "--replace")
        _run("lorebook", "settings", "--server", server, *_world_info_options(case))
        document = folder / "document.json"
        document.write_text(json.dumps(bucket_document(case), ensure_ascii=False), encoding="utf-8")
        result = _run(
            "assemble",
            "--server",
            server,
            "--buckets",
            str(document),
            "--style",
            "standalone",
            "--provider",
            "openai",
        )
    return result["provider_payload"]["messages"]


def bucket_document(case: Case) -> dict[str, Any]:
    """The bucket document for the case: names, seed, history and persona, as acceptance sends them."""
    char = case.char_name()
    history = [
        {
            "role": m["role"],
            "name": m.get("name") or (case.user if m["role"] == "user" else char),
            "content": m["content"],
        }
        for m in case.chat
    ]
    document: dict[str, Any] = {
        "version": 1,
        "names": {"user": case.user, "char": char},
        "seed": SEED,
        "history": history,
    }
    if case.persona:
        document["user_persona"] = case.persona
    if case.generation != "normal":
        document["generation_type"] = case.generation
    if case.quiet_prompt:
        document["quiet_prompt"] = case.quiet_prompt
    if case.context:
        document["budget"] = {"context": case.context, "reply": case.reply}
    return document


def _world_info_options(case: Case) -> list[str]:
    wi = case.wi

    def on(flag: bool) -> str:
        return "on" if flag else "off"

    return [
        "--scan-depth", str(wi["depth"]),
        "--budget-percent", str(wi["budget"]),
        "--budget-cap", str(wi["budget_cap"]),
        "--recursive", on(wi["recursive"]),
        "--max-recursion", str(wi["max_recursion"]),
        "--min-activations", str(wi["min_activations"]),
        "--case-sensitive", on(wi["case_sensitive"]),
        "--whole-words", on(wi["whole_words"]),
        "--include-names", on(wi["include_names"]),
        "--strategy", "character_first",
        "--context-size", str(case.context or 2_000_000),
    ]  # fmt: skip


def _run(*args: str) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command(*args, "--json", stdout=out, stderr=err)
    except SystemExit as exc:
        raise OursFailed(f"{' '.join(args[:2])}: {err.getvalue().strip() or exc}") from None
    return json.loads(out.getvalue())
