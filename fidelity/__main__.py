"""`python -m fidelity run [--cases a,b]`: capture SillyTavern 1.18 afresh and compare;
`python -m fidelity check [--cases a,b]`: compare our output with the captured expectations.

Both print one line per case (identical, or the first difference) and end with the line
`N/M cases identical to SillyTavern 1.18`. Our side runs in a scratch SQLite database under the
harness's cache directory, made anew for each run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from . import drive, endpoint, sillytavern
from .cases import Case, load_cases
from .compare import digest, first_difference, fold_ours, fold_sillytavern
from .ours import OursFailed, our_messages

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fidelity", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("run", "check"))
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
    return _check(cases)


def _django() -> None:
    sillytavern.HOME.mkdir(parents=True, exist_ok=True)
    database = sillytavern.HOME / "ours.sqlite3"
    database.unlink(missing_ok=True)
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
            changed = record(case, captured)
            results.append(_compare(case, number, note=" (SillyTavern's side changed)" if changed else ""))
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
        results.append(_compare(case, number))
    return _summary(results)


def record(case: Case, captured: list[dict[str, Any]]) -> bool:
    """Write the case's expectation from what SillyTavern sent; True when it differs from the last."""
    local = sillytavern.HOME / "captures" / f"{case.id}.json"  # outside the repository: for reading
    local.parent.mkdir(parents=True, exist_ok=True)
    local.write_text(json.dumps(captured, ensure_ascii=False, indent=1), encoding="utf-8")
    folded = fold_sillytavern(captured)
    kept = [digest(m) for m in folded.messages] if case.third_party else folded.messages
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


def compare_case(case: Case, *, server_id: int) -> tuple[str | None, list[str]]:
    """(the first difference or None, the folds applied) for our output against the expectation."""
    expected = json.loads(case.expected_path().read_text(encoding="utf-8"))
    theirs = _local_capture(case) if expected["kept"] == "digests" else None
    speakers = {case.user, *(m.get("name", "") for m in case.chat if m["role"] == "user")}
    names_behavior = case.preset_data().get("names_behavior", 0)
    ours = fold_ours(
        our_messages(case, server_id=server_id), speakers=sorted(speakers), names_behavior=names_behavior
    )
    difference = first_difference(expected["messages"], ours.messages, digests=expected["kept"] == "digests")
    if difference is not None and theirs is not None:  # the text itself, where this machine captured it
        folded = fold_sillytavern(theirs).messages
        if [digest(m) for m in folded] == expected["messages"]:
            difference = first_difference(folded, ours.messages, digests=False)
    return difference, [*expected["folds"], *ours.folds]


def _local_capture(case: Case) -> list[dict[str, Any]] | None:
    path = sillytavern.HOME / "captures" / f"{case.id}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _compare(case: Case, number: int, note: str = "") -> bool:
    try:
        difference, folds = compare_case(case, server_id=900_000 + number)
    except OursFailed as exc:
        print(f"{case.id}: our side refused the input: {exc}")
        return False
    folded = f" [folded: {'; '.join(folds)}]" if folds else ""
    print(f"{case.id}: {'identical' if difference is None else difference}{note}{folded}")
    return difference is None


def _summary(results: list[bool]) -> int:
    print(f"{sum(results)}/{len(results)} cases identical to SillyTavern 1.18")
    return 0


if __name__ == "__main__":
    sys.exit(main())
