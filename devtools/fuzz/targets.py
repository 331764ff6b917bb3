"""The three parsers of untrusted input, each wrapped so that the only allowed failure is its clear error.

A target returns normally on accepted input and on the module's own error (ImportRefused,
BucketError); anything else propagates and is a bug.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine import BucketError, assemble, compile_preset, parse_buckets
from engine.macros import render_text
from engine.st_format import ImportRefused, parse_preset

MAX_BYTES = 2 * 1024 * 1024


def import_target(raw: bytes, parse: Callable[..., Any] = parse_preset) -> bool:
    """Parse an upload; True when it was accepted. A refusal must be one non-empty sentence; any
    other exception propagates (`parse` is replaceable so the harness itself can be tested)."""
    try:
        parsed = parse(raw, filename="fuzz.json", max_bytes=MAX_BYTES)
    except ImportRefused as refused:
        assert refused.message.strip(), "an ImportRefused without a message"
        assert refused.status in (400, 413)
        return False
    assert all("\x00" not in node.content for node in parsed.nodes), "a NUL reached the stored nodes"
    return True


def macro_target(text: str, variables: dict[str, Any] | None = None, seed: int = 0) -> None:
    """Render macro soup; the engine never raises, and output is bounded."""
    output = render_text(text, seed=seed, variables=variables or {})
    assert isinstance(output.text, str)
    assert len(output.text) <= 1024 * 1024 + len(text) * 4


def bucket_target(document: Any, parse: Callable[[Any], Any] = parse_buckets) -> bool:
    """Parse a bucket document; True when it was accepted, False on a BucketError with a message."""
    try:
        parse(document)
    except BucketError as error:
        assert str(error).strip(), "a BucketError without a message"
        return False
    return True


def assembly_target(raw: bytes, document: Any, style: str, provider: str) -> None:
    """Any preset the importer accepts, with any bucket document the parser accepts, assembles."""
    try:
        parsed = parse_preset(raw, filename="fuzz.json", max_bytes=MAX_BYTES)
        doc = parse_buckets(document)
    except (ImportRefused, BucketError):
        return
    preset = compile_preset(
        preset_id=1, name=parsed.name, injection_style="merge", settings=parsed.settings, nodes=parsed.nodes
    )
    result = assemble(doc, preset=preset, style=style, provider=provider or None, count_tokens=False, seed=7)
    assert all(message.role in ("system", "user", "assistant") for message in result.messages)
