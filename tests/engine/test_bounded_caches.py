"""Process-wide caches are shared by a web process's threads and bounded in bytes (issue 50, item 8).

Under 8 threads the token counts' cache let a `KeyError` escape (a key read, then moved after
another thread had dropped it), and the module caches were bounded by count only: 1,024 texts of up
to 10 MiB each."""

from __future__ import annotations

import importlib
import pkgutil
import threading
from collections.abc import Callable
from functools import _lru_cache_wrapper

import engine
from engine import BoundedCache, text_cache
from engine.macros.render import compiled_once
from engine.tokens import _counts, count_text

THREADS = 8


def _in_threads(work: Callable[[int], None]) -> list[BaseException]:
    """Run `work(i)` on THREADS threads started together; the exceptions any of them raised."""
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def run(i: int) -> None:
        start.wait()
        try:
            work(i)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_token_counts_from_eight_threads_agree_and_never_raise():
    texts = [f"The lantern {i} burns low over the harbor." for i in range(60)]
    expected = [count_text(text) for text in texts]
    _counts.clear()
    old_limit = _counts.max_entries
    _counts.max_entries = 16  # entries are dropped while other threads read them
    seen: list[list[int]] = [[] for _ in range(THREADS)]
    try:
        errors = _in_threads(lambda i: seen[i].extend(count_text(t) for _ in range(20) for t in texts))
    finally:
        _counts.max_entries = old_limit
    assert errors == []
    assert all(counts == expected * 20 for counts in seen)


def test_a_cache_under_eight_threads_keeps_its_bounds_and_its_byte_count():
    cache: BoundedCache[int, str] = BoundedCache(max_entries=50, max_bytes=4000)

    def work(i: int) -> None:
        for n in range(3000):
            key = (n * 7 + i) % 200
            cache.put(key, f"v{key}", 10 + key % 300)
            found = cache.get((key + 3) % 200)
            assert found is None or found == f"v{(key + 3) % 200}"

    assert _in_threads(work) == []
    sizes = [size for _, size in cache._entries.values()]
    assert len(sizes) <= 50 and sum(sizes) == cache.bytes <= 4000


def test_a_text_cache_is_bounded_by_the_bytes_of_its_texts_not_only_their_count():
    calls: list[str] = []

    @text_cache(max_entries=1000, max_bytes=64 * 1024)
    def shout(text: str) -> str:
        calls.append(text)
        return text.upper()

    big = [f"{i:04d}" + "x" * 4000 for i in range(40)]  # 40 texts of 4 KB: 160 KB, past 64 KiB
    assert [shout(text) for text in big] == [text.upper() for text in big]
    assert shout.cache.bytes <= 64 * 1024  # type: ignore[attr-defined]
    assert 10 <= len(shout.cache) < 40  # type: ignore[attr-defined]
    calls.clear()
    shout(big[-1])
    assert calls == []  # the most recent is kept
    shout(big[0])
    assert calls == [big[0]]  # the oldest was dropped for room
    huge = "y" * (16 * 1024)  # more than an eighth of the bound: computed, never kept
    shout(huge)
    shout(huge)
    assert calls.count(huge) == 2


def test_a_macro_text_of_megabytes_does_not_stay_in_the_compiled_text_cache():
    """The compiled texts' cache holds at most 64 MiB; a 10 MiB text is an eighth of it and more."""
    text = "{{user}} " + "a" * (10 * 1024 * 1024)
    before = compiled_once.cache.bytes  # type: ignore[attr-defined]
    compiled_once(text)
    assert compiled_once.cache.bytes == before  # type: ignore[attr-defined]
    assert compiled_once.cache.max_bytes <= 64 * 1024 * 1024  # type: ignore[attr-defined]


def test_no_engine_module_keeps_an_unbounded_or_count_only_cache_of_texts():
    """A new `functools.lru_cache` in the engine is caught here: text caches use `text_cache`."""
    allowed = {
        "engine.tokens._encoder",  # two encoders, loaded once
        "engine.sampling.mapping._kept_generation_settings",  # small settings records, not texts
    }
    found = []
    for module_info in pkgutil.walk_packages(engine.__path__, "engine."):
        module = importlib.import_module(module_info.name)
        for name, value in vars(module).items():
            if isinstance(value, _lru_cache_wrapper) and value.__module__ == module.__name__:
                found.append(f"{module.__name__}.{name}")
    assert sorted(set(found) - allowed) == []
