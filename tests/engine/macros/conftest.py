"""Helpers for the macro engine tests: render a text, render several nodes."""

from __future__ import annotations

from typing import Any

import pytest

from engine.macros import MacroEnv, RenderOutput, Segment, compile_text, render_segments, render_text


def render(text: str, **options: Any) -> RenderOutput:
    return render_text(text, **options)


def render_nodes(*texts: str, **options: Any) -> RenderOutput:
    segments = [Segment(f"node{index}", compile_text(text)) for index, text in enumerate(texts)]
    options.setdefault("env", MacroEnv())
    options.setdefault("seed", 0)
    return render_segments(segments, **options)


@pytest.fixture
def lantern_env() -> MacroEnv:
    return MacroEnv(server_id=1001)
