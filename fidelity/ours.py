"""Our side of a case, through the command-line contracts acceptance uses (`card import`, `lorebook
import`, `preset import --replace`, `lorebook settings`, `assemble --style standalone --provider
openai --json`), run in-process against whatever database Django is set up with."""

from __future__ import annotations

import io
import json
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.core.management import CommandError, call_command

from engine.macros import Macro, Scoped, compile_text

from .cases import Case
from .drive import UNLOCKED
from .endpoint import MODEL

SEED = 1
# what a draw changes between them is masked (docs/fidelity.md#the-deliberate-differences, item 9)
SEEDS = (1, 2, 3, 4, 5, 6)
HISTORY_TAG = "DIALOGUE_HISTORY"
# docs/fidelity.md#the-deliberate-differences, item 6: SillyTavern 1.18 sends a macro whose arguments hold a
# `|` as written. To compare everything around such macros, our side gets them with their braces swapped for
# private-use characters (so our engine leaves them as written too), swapped back in what it sends.
OPEN, CLOSE = "\ue000", "\ue001"
PIPE_FOLD = "§11.1 item 6: {count} macro(s) with a “|” in their arguments sent as written on both sides"


class OursFailed(Exception):
    """A command refused the case's input; the message is its error line."""


def our_messages(
    case: Case, *, server_id: int, seeds: Sequence[int] = (SEED,)
) -> tuple[list[list[dict[str, Any]]], list[str]]:
    """The messages our `assemble` sends to OpenAI for the case, on a server of its own, once per seed
    (the imports run once), and the folds applied to get them. With several seeds, the first two
    decide: when they agree nothing was drawn and the rest are not run."""
    server = str(server_id)
    data, piped = as_written_pipes(case.preset_data())
    runs = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        preset = folder / "preset.json"
        preset.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        if case.group:
            _group(case, server)
        else:
            _run(
                "card",
                "import",
                str(case.path(case.card)),
                "--server",
                server,
                "--name",
                "fidelity",
                "--replace",
            )
        if case.lorebook:
            book = str(case.path(case.lorebook))
            _run("lorebook", "import", book, "--server", server, "--name", "fidelity-book", "--replace")
        _run("preset", "import", str(preset), "--server", server, "--name", "fidelity", "--replace")
        _run("lorebook", "settings", "--server", server, *_world_info_options(case))
        may_draw = _may_draw(case)
        for number, seed in enumerate(seeds):
            runs.append(_assemble(case, folder, server, seed))
            if number == 1 and runs[1] == runs[0] and not may_draw:
                break
    return runs, ([PIPE_FOLD.format(count=piped)] if piped else [])


_DRAW = re.compile(rb"\{\{\s*(?:random|roll|pick)", re.IGNORECASE)


def _may_draw(case: Case) -> bool:
    """Whether the case's files may hold a draw: then every seed runs, since two seeds can agree on a
    draw of few choices (`{{random::mad::scornful}}`) by chance. A card that is not JSON may."""
    for ref in case.inputs:
        path = case.path(ref)
        if path.suffix.lower() != ".json" or _DRAW.search(path.read_bytes()):
            return True
    return False


GROUP_NAME = "Fidelity Party"


def _group(case: Case, server: str) -> None:
    """The group's cards imported under their names, then the group made (docs/groups.md)."""
    for ref, name in zip(case.group["cards"], case.member_names(), strict=True):
        _run("card", "import", str(case.path(ref)), "--server", server, "--name", name, "--replace")
    group = case.group
    options = ["--mode", group.get("mode", "swap")]
    if group.get("muted"):
        options += ["--muted", ",".join(group["muted"])]
    if group.get("join_prefix"):
        options += ["--join-prefix", group["join_prefix"]]
    if group.get("join_suffix"):
        options += ["--join-suffix", group["join_suffix"]]
    members = ",".join(case.member_names())
    _run(
        "group",
        "create",
        "--server",
        server,
        "--name",
        GROUP_NAME,
        "--members",
        members,
        *options,
        "--replace",
    )


def _assemble(case: Case, folder: Path, server: str, seed: int) -> list[dict[str, Any]]:
    document = folder / "document.json"
    document.write_text(json.dumps(bucket_document(case, seed=seed), ensure_ascii=False), encoding="utf-8")
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
        # SillyTavern counts a Custom (OpenAI-compatible) source with gpt-3.5-turbo's tokenizer
        "--encoding",
        "cl100k_base",
    )
    messages = result["provider_payload"]["messages"]
    neutral = result["messages"]
    if len(neutral) == len(messages):  # OpenAI's body keeps one message per message: mark the history's
        for message, source in zip(messages, neutral, strict=True):
            message["_history"] = any(s.get("tag") == HISTORY_TAG for s in source["sources"])
    for message in messages:
        if isinstance(message.get("content"), str) and OPEN in message["content"]:
            message["content"] = message["content"].replace(OPEN, "{{").replace(CLOSE, "}}")
    return messages


def as_written_pipes(data: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The preset with every macro whose arguments hold a `|` made inert (braces swapped), and how
    many there were."""
    count = 0
    prompts = data.get("prompts")
    if not isinstance(prompts, list):
        return data, 0
    changed = []
    for prompt in prompts:
        content = prompt.get("content") if isinstance(prompt, dict) else None
        if not isinstance(content, str) or "|" not in content or "{{" not in content:
            changed.append(prompt)
            continue
        count += len(_piped_spans(content))
        changed.append({**prompt, "content": inert_pipes(content)})
    return {**data, "prompts": changed}, count


def inert_pipes(content: str) -> str:
    """`content` with the braces of every macro whose arguments hold a `|` swapped."""
    for start, end in reversed(_piped_spans(content)):
        inert = content[start:end].replace("{{", OPEN).replace("}}", CLOSE)
        content = content[:start] + inert + content[end:]
    return content


def _piped_spans(text: str) -> list[tuple[int, int]]:
    """The outermost macros of `text` whose arguments hold a `|` (comments aside), as spans."""
    spans: list[tuple[int, int]] = []

    def walk(parts: Any) -> None:
        for part in parts:
            if isinstance(part, Macro):
                if part.args and part.name != "//" and "|" in text[part.start : part.end]:
                    spans.append((part.start, part.end))
                    continue
                for arg in part.args:
                    walk(arg)
                walk(part.body)
            elif isinstance(part, Scoped):
                walk(part.parts)

    walk(compile_text(text).parts)
    return spans


def bucket_document(case: Case, *, seed: int = SEED) -> dict[str, Any]:
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
        "seed": seed,
        "history": history,
    }
    if case.persona:
        document["user_persona"] = case.persona
    if case.generation != "normal":
        document["generation_type"] = case.generation
    if case.quiet_prompt:
        document["quiet_prompt"] = case.quiet_prompt
    if case.authors_note:
        document["authors_note"] = case.authors_note
    # what SillyTavern's {{model}}, {{maxContext}} and {{maxResponse}} read: the endpoint's model, the
    # case's context (else the unlocked one) and its reply's reserve
    document["model"] = MODEL
    document["budget"] = {"context": case.context or UNLOCKED, "reply": case.reply if case.context else 300}
    if case.group:
        turn = {"name": GROUP_NAME, "speaker": case.group["speaker"]}
        for key in ("scenario_override", "examples_override"):
            if case.group.get(key):
                turn[key] = case.group[key]
        document["group"] = turn
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
        "--min-activations-depth-max", str(wi["min_activations_depth_max"]),
        "--group-scoring", on(wi["group_scoring"]),
        "--case-sensitive", on(wi["case_sensitive"]),
        "--whole-words", on(wi["whole_words"]),
        "--include-names", on(wi["include_names"]),
        "--strategy", "character_first",
        "--context-size", str(case.context or UNLOCKED),
    ]  # fmt: skip


def _run(*args: str) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command(*args, "--json", stdout=out, stderr=err)
    except CommandError as exc:  # a command this checkout does not have
        raise OursFailed(f"{' '.join(args[:2])}: {exc}") from None
    except SystemExit as exc:
        raise OursFailed(f"{' '.join(args[:2])}: {err.getvalue().strip() or exc}") from None
    return json.loads(out.getvalue())
