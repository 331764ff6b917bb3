"""`python -m fidelity run [--cases a,b]`: capture SillyTavern 1.18 afresh and compare;
`python -m fidelity check [--cases a,b]`: compare our output with the captured expectations;
`python -m fidelity record [--cases a,b]`: write the expectations again from this machine's last
captures (after a change to the folds), without running SillyTavern.

Both print one line per case (identical, or the first difference) and end with the line
`N/M cases identical to SillyTavern 1.18`. Our side runs in a scratch SQLite database under the
harness's cache directory, made anew for each run.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.tokens import count_text

from . import drive, endpoint, sillytavern
from .cases import Case, load_cases
from .compare import (
    DRAW_FOLD,
    Mask,
    apply_masks,
    digest,
    draw_masks,
    first_difference,
    fold_ours,
    fold_sillytavern,
    fold_trimmed,
)
from .ours import SEEDS, OursFailed, inert_pipes, our_messages

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fidelity", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("run", "check", "record"))
    parser.add_argument("--cases", help="Comma-separated case ids (default: every case).")
    args = parser.parse_args(argv)
    try:
        cases = load_cases(args.cases.split(",") if args.cases else None)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    _django()
    if args.command == "run":
        return _run(cases)
    if args.command == "record":
        return _record_again(cases)
    return _check(cases)


def _django() -> None:
    # A scratch database of this run's own: two runs at once (two checkouts) never share one.
    scratch = tempfile.TemporaryDirectory(prefix="tavernkeep-fidelity-")
    atexit.register(scratch.cleanup)
    database = Path(scratch.name) / "ours.sqlite3"
    os.environ["DATABASE_URL"] = f"sqlite:///{database}"
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    import django  # only once DATABASE_URL names the scratch database
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def _run(cases: list[Case]) -> int:
    sillytavern.install()
    sillytavern.start()
    recorder = endpoint.start(drive.ENDPOINT_PORT)
    results = []
    try:
        for number, case in enumerate(cases):
            if not case.available():
                print(f"{case.id}: skipped, an input file is missing")
                continue
            try:
                captured = drive.capture(case, recorder)
            except Exception as exc:  # one broken case must not hide the others
                print(f"{case.id}: SillyTavern failed: {exc}")
                results.append(False)
                continue
            try:
                ours = our_side(case, server_id=900_000 + number)
            except OursFailed as exc:
                record(case, captured, [])
                print(f"{case.id}: our side refused the input: {exc}")
                results.append(False)
                continue
            changed = record(case, captured, ours.masks)
            note = " (SillyTavern's side changed)" if changed else ""
            results.append(_report(case, *compare_case(case, server_id=0, ours=ours), note=note))
    finally:
        recorder.shutdown()
    return _summary(results)


def _check(cases: list[Case]) -> int:
    results = []
    for number, case in enumerate(cases):
        if not case.available() or not case.expected_path().is_file():
            print(
                f"{case.id}: skipped, {'no capture yet' if case.available() else 'an input file is missing'}"
            )
            continue
        try:
            difference, folds = compare_case(case, server_id=900_000 + number)
        except OursFailed as exc:
            print(f"{case.id}: our side refused the input: {exc}")
            results.append(False)
            continue
        results.append(_report(case, difference, folds))
    return _summary(results)


def _record_again(cases: list[Case]) -> int:
    results = []
    for number, case in enumerate(cases):
        captured = _local_capture(case)
        if captured is None or not case.available():
            print(f"{case.id}: skipped, no capture on this machine")
            continue
        try:
            ours = our_side(case, server_id=900_000 + number)
        except OursFailed as exc:
            print(f"{case.id}: our side refused the input: {exc}")
            results.append(False)
            continue
        note = " (expectation changed)" if record(case, captured, ours.masks) else ""
        results.append(_report(case, *compare_case(case, server_id=0, ours=ours), note=note))
    return _summary(results)


def record(case: Case, captured: list[dict[str, Any]], masks: list[Mask | None]) -> bool:
    """Write the case's expectation from what SillyTavern sent (its draws masked where our side's
    masks fit); True when it differs from the last."""
    local = sillytavern.HOME / "captures" / f"{case.id}.json"  # outside the repository: for reading
    local.parent.mkdir(parents=True, exist_ok=True)
    local.write_text(json.dumps(captured, ensure_ascii=False, indent=1), encoding="utf-8")
    folded = fold_sillytavern(captured)
    messages, _count = apply_masks(folded.messages, masks)
    kept = [digest(m) for m in messages] if case.third_party else messages
    data = {
        "case": case.id,
        "sillytavern": "1.18.0",
        "kept": "digests" if case.third_party else "messages",
        "folds": folded.folds,
        "messages": kept,
    }
    path = case.expected_path()
    before = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return before is not None and before["messages"] != kept


@dataclass
class OurSide:
    messages: list[dict[str, Any]]  # the first seed's, folded, draws masked
    masks: list[Mask | None]
    folds: list[str]
    name_tokens: int = 0  # what the names folded out of our user messages and the inert macros cost


ENCODING = "cl100k_base"  # SillyTavern's tokenizer for a Custom (OpenAI-compatible) source


def _cost(message: dict[str, Any]) -> int:
    """A message's tokens as SillyTavern counts them (its per-message formula)."""
    named = count_text(message["name"], ENCODING) + 1 if message.get("name") else 0
    return 3 + count_text(message["role"], ENCODING) + count_text(str(message["content"]), ENCODING) + named


def our_side(case: Case, *, server_id: int) -> OurSide:
    """Our messages for the case with the folds of docs/fidelity.md#the-deliberate-differences, assembled
    with several seeds to mask the draws."""
    runs, folds = our_messages(case, server_id=server_id, seeds=SEEDS)
    speakers = sorted({case.user, *(m.get("name", "") for m in case.chat if m["role"] == "user")})
    names_behavior = case.preset_data().get("names_behavior", 0)
    if case.group and names_behavior == 0:  # in a group SillyTavern names every other user too
        speakers = [case.user]
    folded = [fold_ours(run, speakers=speakers, names_behavior=names_behavior) for run in runs]
    masks = draw_masks([f.messages for f in folded]) if len(folded) > 1 else []
    messages, count = apply_masks(folded[0].messages, masks)
    if count:
        folds.append(DRAW_FOLD.format(count=count))
    names = sum(count_text(a, ENCODING) - count_text(b, ENCODING) for a, b in folded[0].renamed)
    # what the inert macros (item 6) cost our budget beyond SillyTavern's text: trimmed like the names
    inert = sum(
        max(0, count_text(inert_pipes(text), ENCODING) - count_text(text, ENCODING))
        for text in (str(m["content"]) for m in folded[0].messages)
        if "|" in text and "{{" in text
    )
    return OurSide(messages, masks, [*folds, *folded[0].folds], names + inert)


def compare_case(case: Case, *, server_id: int, ours: OurSide | None = None) -> tuple[str | None, list[str]]:
    """(the first difference or None, the folds applied) for our output against the expectation."""
    expected = json.loads(case.expected_path().read_text(encoding="utf-8"))
    digests = expected["kept"] == "digests"
    if ours is None:
        ours = our_side(case, server_id=server_id)
    difference = first_difference(expected["messages"], ours.messages, digests=digests)
    trim_fold = None
    if difference is not None and not digests and case.context and ours.name_tokens:
        trimmed = fold_trimmed(expected["messages"], ours.messages, name_tokens=ours.name_tokens, cost=_cost)
        if trimmed is not None:
            difference = first_difference(trimmed[0], ours.messages, digests=False)
            trim_fold = trimmed[1] if difference is None else None
    theirs = _local_capture(case) if digests else None
    if difference is not None and theirs is not None:  # the text itself, where this machine captured it
        folded, _count = apply_masks(fold_sillytavern(theirs).messages, ours.masks)
        if [digest(m) for m in folded] == expected["messages"]:
            difference = first_difference(folded, ours.messages, digests=False)
    return difference, [*expected["folds"], *ours.folds, *([trim_fold] if trim_fold else [])]


def _local_capture(case: Case) -> list[dict[str, Any]] | None:
    path = sillytavern.HOME / "captures" / f"{case.id}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _report(case: Case, difference: str | None, folds: list[str], note: str = "") -> bool:
    folded = f" [folded: {'; '.join(folds)}]" if folds else ""
    print(f"{case.id}: {'identical' if difference is None else difference}{note}{folded}")
    return difference is None


def _summary(results: list[bool]) -> int:
    print(f"{sum(results)}/{len(results)} cases identical to SillyTavern 1.18")
    return 0


if __name__ == "__main__":
    sys.exit(main())
