"""World Info timings (docs/worldinfo.md): activation over a 1 000-entry book, the timed-state replay of a
200-message sample conversation over it, import of the largest corpus lorebook, and a 10 000-entry lorebook
(our own entry limit) through the server: import, compile, the first assembly after activation in a fresh
process, later assemblies, the lorebook page; and one entry with a 1.2 MB key list.

Run: .venv/bin/python bench/worldinfo.py [--big-only] [--runs N]
The engine figures are medians of several runs in CPU time of this process (other load on the machine
does not inflate them); targets: activation ≤ 5 ms per assembly with 100 history messages, scan depth
10, recursion on; import ≤ 200 ms. The server figures are wall-clock times (they include the
database): a throwaway SQLite database, or, when DATABASE_URL names a PostgreSQL server (what
production runs), a throwaway database on it (TEST_DATABASE_NAME, default bench_tk_worldinfo), created
and dropped by the bench; the database DATABASE_URL names is never touched.
Targets: import ≤ 2 s, first assembly after activation ≤ 2 s (in a process that never saw the book).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench.corpus_path import CORPUS
from engine.worldinfo import (
    ActivationRequest,
    ScanMessage,
    ScanTexts,
    WorldInfoSettings,
    activate,
    compile_book,
)
from engine.worldinfo.fields import normalise_entry
from engine.worldinfo.importer import parse_lorebook

RUNS = 21
ENTRIES = 1_000
MESSAGES = 100
REPLAY_MESSAGES = 200
TARGET_ACTIVATION_MS = 5.0
TARGET_IMPORT_MS = 200.0


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(4, 9))) for _ in range(size)]


def _prose(rng: random.Random, filler: list[str], names: list[str], length: int, mentions: int) -> str:
    words = [rng.choice(filler) for _ in range(length)]
    for _ in range(mentions):
        words[rng.randrange(length)] = rng.choice(names)
    return " ".join(words)


def make_book(rng: random.Random, words: list[str], filler: list[str]):
    """1 000 entries: 3–5 keys each (some multi-word, some CJK), a few constant, grouped, secondary keys;
    each entry's text mentions one other key now and then, so recursion has something to find."""
    entries = []
    for uid in range(ENTRIES):
        keys = [rng.choice(words) for _ in range(rng.randint(3, 5))]
        if uid % 10 == 0:
            keys.append(f"{rng.choice(words)} {rng.choice(words)}")
        if uid % 25 == 0:
            keys.append("魔法" + str(uid))
        raw = {
            "key": keys,
            "keysecondary": [rng.choice(words)] if uid % 7 == 0 else [],
            "content": _prose(rng, filler, words, 40, 1 if uid % 3 == 0 else 0),
            "constant": uid % 100 == 0,
            "order": rng.randint(0, 1000),
            "position": rng.choice([0, 1, 4]),
            "group": f"g{uid % 20}" if uid % 9 == 0 else "",
        }
        entries.append(normalise_entry(raw, uid, lambda _name: None))
    return compile_book("Bench", entries)


def make_history(rng: random.Random, words: list[str], filler: list[str]) -> tuple[ScanMessage, ...]:
    """100 messages of 60 words, each naming two or three things a key may match."""
    return tuple(
        ScanMessage(name="Ann" if i % 2 else "Mira", text=_prose(rng, filler, words, 60, 3), number=i + 1)
        for i in range(MESSAGES)
    )


def bench_activation() -> tuple[float, float, int, int]:
    from engine.worldinfo import entry_tokens as count_text

    rng = random.Random(7)
    words = _vocabulary(rng, 3_000)
    filler = _vocabulary(rng, 2_000)
    start = time.process_time()
    book = make_book(rng, words, filler)
    compile_ms = (time.process_time() - start) * 1000
    history = make_history(rng, words, filler)
    settings = WorldInfoSettings(scan_depth=10, recursive=True, budget_percent=100, context_size=200_000)
    times = []
    activated = passes = 0
    for seed in range(RUNS):
        request = ActivationRequest(
            books=[book],
            texts=ScanTexts(history=history),
            settings=settings,
            names={"user": "Ann", "char": "Mira"},
            chat_length=MESSAGES,
            seed=seed,
        )
        begin = time.process_time()
        result = activate(request, count_tokens=count_text)
        times.append((time.process_time() - begin) * 1000)
        activated, passes = len(result.activated), result.passes
    return statistics.median(times[1:]), compile_ms, activated, passes


def bench_replay() -> tuple[float, float]:
    """A 200-message conversation at the server defaults (scan depth 2) over the 1 000-entry book with
    one entry in 20 sticky and one in 30 on cooldown: the whole replay, then one more message (cached)."""
    from dataclasses import replace

    from engine.worldinfo import entry_tokens as count_text
    from engine.worldinfo import replay_state

    rng = random.Random(7)
    words = _vocabulary(rng, 3_000)
    filler = _vocabulary(rng, 2_000)
    book = make_book(rng, words, filler)
    timed = [
        replace(
            ce.entry,
            sticky=3 if ce.entry.uid % 20 == 0 else None,
            cooldown=2 if ce.entry.uid % 30 == 0 else None,
        )
        for ce in book.entries
    ]
    book = compile_book("Bench", timed)
    history = tuple(
        ScanMessage(name="Ann" if i % 2 else "Mira", text=_prose(rng, filler, words, 60, 3), number=i + 1)
        for i in range(REPLAY_MESSAGES)
    )
    request = ActivationRequest(
        books=[book], texts=ScanTexts(history=history), names={"user": "Ann", "char": "Mira"}
    )
    begin = time.process_time()
    replay_state(request, steps=REPLAY_MESSAGES - 1, count_tokens=count_text, cache_key="bench")
    whole_ms = (time.process_time() - begin) * 1000
    begin = time.process_time()
    replay_state(request, steps=REPLAY_MESSAGES, count_tokens=count_text, cache_key="bench")
    next_ms = (time.process_time() - begin) * 1000
    return whole_ms, next_ms


def bench_import() -> tuple[str, float, int]:
    files = sorted((CORPUS / "worldinfo").glob("*.json"), key=lambda p: p.stat().st_size)
    largest = files[-1]
    raw = largest.read_bytes()
    parse_lorebook(raw, filename=largest.name)
    times = []
    entries = 0
    for _ in range(RUNS):
        begin = time.process_time()
        entries = len(parse_lorebook(raw, filename=largest.name).entries)
        times.append((time.process_time() - begin) * 1000)
    return largest.name, statistics.median(times), entries


BIG_ENTRIES = 10_000
BIG_SERVER = 777026
TARGET_BIG_MS = 2_000.0
ROOT = Path(__file__).resolve().parent.parent


def big_book_json(entries: int = BIG_ENTRIES, *, seed: int = 11) -> bytes:
    """A World Info file of `entries` entries under the 5 MiB upload limit: 2–4 single-word keys each
    (one in ten a two-word phrase), 30 words of text, a constant entry in 500, three positions."""
    rng = random.Random(seed)
    vocabulary = _vocabulary(rng, 4_000)
    book = {}
    for uid in range(entries):
        keys = [rng.choice(vocabulary) for _ in range(rng.randint(2, 4))]
        if uid % 10 == 0:
            keys.append(f"{rng.choice(vocabulary)} {rng.choice(vocabulary)}")
        book[str(uid)] = {
            "uid": uid,
            "key": keys,
            "keysecondary": [],
            "comment": f"Entry {uid}",
            "content": " ".join(rng.choice(vocabulary) for _ in range(30)),
            "constant": uid % 500 == 0,
            "order": rng.randint(0, 1000),
            "position": rng.choice([0, 1, 4]),
        }
    return json.dumps({"entries": book}).encode()


def huge_keys_json() -> bytes:
    """One entry whose key list is 1.2 MB (90 000 keys), and two ordinary ones."""
    rng = random.Random(5)
    keys = [f"k{rng.randrange(10**8):08d}" for _ in range(90_000)]
    entries = {
        "0": {"uid": 0, "key": keys, "comment": "Many keys", "content": "The many-keyed entry."},
        "1": {"uid": 1, "key": ["lantern"], "comment": "Lantern", "content": "A lantern."},
        "2": {"uid": 2, "key": ["harbor"], "comment": "Harbor", "content": "The harbor."},
    }
    return json.dumps({"entries": entries}).encode()


def _django(database_url: str) -> None:
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": database_url,
            "DEBUG": "0",
            "SECURE_HTTPS": "0",
        }
    )
    os.environ.pop("REDIS_URL", None)  # each process its own cache: a fresh process starts cold
    import django

    django.setup()


def _scan_doc(words: list[str]) -> dict:
    """A bot request: 20 messages naming some of the book's keys."""
    rng = random.Random(3)
    history = [
        {
            "role": "user" if i % 2 else "assistant",
            "name": "Ann" if i % 2 else "Mira",
            "content": " ".join(rng.choice(words) for _ in range(40)),
        }
        for i in range(20)
    ]
    return {"names": {"user": "Ann", "char": "Mira"}, "history": history}


def child_assemble(database_url: str, runs: int) -> None:
    """In a fresh process (as a worker that never saw the book): warm what a worker warms at start
    (the token tables), then the first assembly and the median of later ones, as JSON on stdout."""
    _django(database_url)
    from assembly.selectors import assemble_for_server
    from engine import parse_buckets
    from engine.tokens import load_tables

    load_tables()
    doc = parse_buckets(json.loads(sys.stdin.read()))
    begin = time.perf_counter()
    first = assemble_for_server(server_id=BIG_SERVER, doc=doc)
    first_ms = (time.perf_counter() - begin) * 1000
    later = []
    for _ in range(runs):
        begin = time.perf_counter()
        assemble_for_server(server_id=BIG_SERVER, doc=doc)
        later.append((time.perf_counter() - begin) * 1000)
    activated = len(first.world_info.get("activated", [])) if isinstance(first.world_info, dict) else 0
    print(json.dumps({"first": first_ms, "later": statistics.median(later), "activated": activated}))


def _fresh_process(database_url: str, doc: dict, runs: int) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", database_url, "--runs", str(runs)],
        input=json.dumps(doc),
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _cli_figures(database_url: str, raw: bytes, doc: dict, folder: Path) -> dict[str, float]:
    """Wall-clock ms of `manage.py` commands in fresh processes (each pays Django's start-up): the
    import against a trivial command, the assembly with the book active against it inactive."""
    # As the image does (Dockerfile): the sources compiled once, so no command compiles what it imports.
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "-x", "/(tests|node_modules|[.]venv)/", str(ROOT)],
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""},
        check=False,
        capture_output=True,
    )
    book_file, doc_file = folder / "Big.json", folder / "doc.json"
    book_file.write_bytes(raw)
    doc_file.write_text(json.dumps(doc))
    env = {**os.environ, "DATABASE_URL": database_url}
    env.pop("REDIS_URL", None)

    cpu: dict[str, float] = {}

    def timed(*args: str) -> float:
        begin = time.perf_counter()
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu[" ".join(args[:2])] = (after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime) * 1000
        return (time.perf_counter() - begin) * 1000

    server = str(BIG_SERVER)
    figures = {
        "list": timed("lorebook", "list", "--server", server),
        "import": timed("lorebook", "import", str(book_file), "--server", server, "--replace"),
        "assemble": timed("assemble", "--server", server, "--buckets", str(doc_file), "--json"),
    }
    with_book = cpu["assemble --server"]
    from lorebooks.models import Lorebook

    Lorebook.objects.filter(server_id=BIG_SERVER).update(is_active=False)
    figures["assemble_without"] = timed("assemble", "--server", server, "--buckets", str(doc_file), "--json")
    Lorebook.objects.filter(server_id=BIG_SERVER).update(is_active=True)
    figures["assemble_cpu"] = with_book - cpu["assemble --server"]  # with the book over without it
    figures["import_cpu"] = cpu["lorebook import"] - cpu["lorebook list"]
    return figures


def bench_big(runs: int) -> None:
    """The 10 000-entry book and the 1.2 MB key list through the server's own code paths."""
    scratch = tempfile.TemporaryDirectory(prefix="tk-wi-bench-")
    given = os.environ.get("DATABASE_URL", "")
    database_url = given if given.startswith("postgres") else f"sqlite:///{scratch.name}/wi.sqlite3"
    os.environ.setdefault("TEST_DATABASE_NAME", "bench_tk_worldinfo")
    _django(database_url)
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_databases, teardown_databases

    import engine.worldinfo as wi
    from core.actors import SYSTEM
    from lorebooks import cache as wi_cache
    from lorebooks import services
    from servers.models import Role, Server
    from servers.services import membership_set

    if connection.vendor == "postgresql":
        throwaway = setup_databases(verbosity=0, interactive=False)
        database_url = urlunsplit(urlsplit(given)._replace(path="/" + connection.settings_dict["NAME"]))
    else:
        throwaway = None
        call_command("migrate", verbosity=0)
    server = Server.objects.create(id=BIG_SERVER, name="World Info bench")
    user = get_user_model().objects.filter(
        username="wi-bench-admin"
    ).first() or get_user_model().objects.create_user(username="wi-bench-admin", password="not used")
    membership_set(server=server, user=user, role=Role.ADMIN, by=SYSTEM)
    client = Client()
    client.force_login(user)
    print(
        f"\n10 000-entry lorebook through the server ({connection.vendor}; wall-clock ms, machine load included)"
    )
    try:
        raw = big_book_json()
        parsed = wi.parse_lorebook(raw, filename="Big.json")
        begin = time.perf_counter()
        book = wi.compile_book("Big", parsed.entries)
        compile_ms = (time.perf_counter() - begin) * 1000
        load_note = ""
        if hasattr(wi, "book_from_bytes"):
            blob = wi.book_to_bytes(book)
            begin = time.perf_counter()
            wi.book_from_bytes(blob)
            load_note = f"; loading the stored compiled form {(time.perf_counter() - begin) * 1000:.0f} ms ({len(blob) / 1e6:.1f} MB)"
        print(f"  compile {len(parsed.entries)} entries: {compile_ms:.0f} ms{load_note}")

        imports, cpu = [], []
        for attempt in range(3):
            begin, begin_cpu = time.perf_counter(), time.process_time()
            result = services.lorebook_import(
                server=server,
                raw=raw,
                filename="Big.json",
                on_clash="replace" if attempt else "ask",
                by=SYSTEM,
            )
            imports.append((time.perf_counter() - begin) * 1000)
            cpu.append((time.process_time() - begin_cpu) * 1000)
        import_ms = statistics.median(imports)
        print(
            f"  import ({len(raw) / 1e6:.1f} MB, {result.summary.entries} entries, stored active): median of 3 "
            f"{import_ms:.0f} ms (CPU of this process {statistics.median(cpu):.0f} ms, the database's own "
            f"work not counted); target ≤ {TARGET_BIG_MS:.0f} ms, ratio {import_ms / TARGET_BIG_MS:.2f}"
        )
        words = [k for e in parsed.entries[:4000] for k in e.key if " " not in k]
        doc = _scan_doc(words)
        fresh = _fresh_process(database_url, doc, runs)
        print(
            f"  first assembly after activation, fresh process: {fresh['first']:.0f} ms "
            f"({fresh['activated']} entries activated); target ≤ {TARGET_BIG_MS:.0f} ms, "
            f"ratio {fresh['first'] / TARGET_BIG_MS:.2f}"
        )
        print(f"  later assemblies: median {fresh['later']:.1f} ms")
        cache.clear()
        wi_cache.clear_local()
        from assembly.selectors import assemble_for_server
        from engine import parse_buckets
        from engine.tokens import load_tables

        load_tables()  # as a worker's warm-up does (the import no longer loads them)
        parsed_doc = parse_buckets(doc)
        begin = time.perf_counter()
        assemble_for_server(server_id=BIG_SERVER, doc=parsed_doc)
        print(
            f"  first assembly after activation, this process (cache cleared): {(time.perf_counter() - begin) * 1000:.0f} ms"
        )
        cli = _cli_figures(database_url, raw, doc, Path(scratch.name))
        print(
            f"  CLI (manage.py, wall-clock): import {cli['import']:.0f} ms, {cli['import'] - cli['list']:+.0f} ms over "
            f"`lorebook list` ({cli['list']:.0f} ms); assemble {cli['assemble']:.0f} ms, "
            f"{cli['assemble'] - cli['assemble_without']:+.0f} ms over the same without the book "
            f"({cli['assemble_without']:.0f} ms)"
        )
        print(
            f"  CLI, CPU of the command's process (what machine load hardly changes): import "
            f"{cli['import_cpu']:+.0f} ms over `lorebook list`; assemble {cli['assemble_cpu']:+.0f} ms "
            "with the book over without it"
        )
        big = services.Lorebook.objects.get(server=server, name="Big")  # the CLI replaced it: a new id
        url = f"/servers/{BIG_SERVER}/lorebooks/{big.pk}/"
        begin = time.perf_counter()
        page = client.get(url)
        print(
            f"  lorebook page: HTTP {page.status_code}, {len(page.content) / 1e6:.2f} MB in "
            f"{(time.perf_counter() - begin) * 1000:.0f} ms"
        )

        ids = list(big.entries.values_list("pk", flat=True))
        begin = time.perf_counter()
        services.entries_set_enabled(lorebook=big, entry_ids=ids, enabled=False, by=SYSTEM)
        all_ms = (time.perf_counter() - begin) * 1000
        begin = time.perf_counter()
        services.entries_set_enabled(lorebook=big, entry_ids=ids[:1], enabled=True, by=SYSTEM)
        print(
            f"  disable all 10 000 entries (the page's bulk button): {all_ms:.0f} ms; then enable one: "
            f"{(time.perf_counter() - begin) * 1000:.0f} ms"
        )

        raw = huge_keys_json()
        begin = time.perf_counter()
        result = services.lorebook_import(server=server, raw=raw, filename="Keys.json", by=SYSTEM)
        import_ms = (time.perf_counter() - begin) * 1000
        services.lorebook_set_active(
            lorebook=services.Lorebook.objects.get(server=server, name="Big"), active=False, by=SYSTEM
        )
        cache.clear()
        wi_cache.clear_local()
        fresh = _fresh_process(
            database_url,
            {**doc, "history": [*doc["history"], {"role": "user", "name": "Ann", "content": "a lantern"}]},
            runs,
        )
        begin = time.perf_counter()
        page = client.get(f"/servers/{BIG_SERVER}/lorebooks/{result.lorebook.pk}/")
        page_ms = (time.perf_counter() - begin) * 1000
        print(
            f"one entry with a {len(raw) / 1e6:.1f} MB key list: import {import_ms:.0f} ms; first assembly, fresh "
            f"process {fresh['first']:.0f} ms, later {fresh['later']:.1f} ms; its lorebook page "
            f"{len(page.content) / 1e6:.2f} MB in {page_ms:.0f} ms"
        )
    finally:
        if throwaway is not None:
            connection.close()
            teardown_databases(throwaway, verbosity=0)
        scratch.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--big-only", action="store_true", help="only the 10 000-entry book")
    parser.add_argument("--runs", type=int, default=10, help="later assemblies to take the median of")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_assemble(args.child, args.runs)
        return
    if not args.big_only:
        engine_figures()
    bench_big(args.runs)


def engine_figures() -> None:
    median, compile_ms, activated, passes = bench_activation()
    print(
        f"activation: {ENTRIES} entries, {MESSAGES} messages, scan depth 10, recursion on: "
        f"median {median:.2f} ms per assembly ({activated} activated in {passes} passes); "
        f"target ≤ {TARGET_ACTIVATION_MS:.0f} ms, ratio {median / TARGET_ACTIVATION_MS:.2f}"
    )
    print(f"compile once per book version: {compile_ms:.1f} ms")
    whole_ms, next_ms = bench_replay()
    print(
        f"timed-state replay of a {REPLAY_MESSAGES}-message conversation (1 000 entries, scan depth 2): "
        f"{whole_ms:.0f} ms the first time, {next_ms:.1f} ms for one message more (steps cached)"
    )
    name, import_ms, entries = bench_import()
    print(
        f"import of the largest corpus lorebook ({name}, {entries} entries): median {import_ms:.1f} ms; "
        f"target ≤ {TARGET_IMPORT_MS:.0f} ms, ratio {import_ms / TARGET_IMPORT_MS:.2f}"
    )


if __name__ == "__main__":
    main()
