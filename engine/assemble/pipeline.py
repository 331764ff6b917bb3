"""The top-level `assemble`: a bucket document (and maybe a preset) in, the exact messages out.

Pure: no Django, no I/O, never writes anything. The work is the named list of steps `STEPS`, in the
order docs/assembly.md#order-of-work gives; each step reads and writes one `State`.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from typing import NamedTuple

from ..buckets import BucketDocument
from ..cards import Card
from ..compiled import CompiledPreset
from ..groups import Group
from ..regex import CompiledScript
from ..sampling import GenerationSettings
from ..tokens import DEFAULT_ENCODING
from ..worldinfo import WorldInfoInput
from . import finish, placing, prepare, preset
from .kept_tail import kept_tail
from .result import Assembly, StoredStm
from .state import Request, State
from .world_info import world_info


class Step(NamedTuple):
    name: str  # as docs/assembly.md#order-of-work names it
    run: Callable[[State], None]


STEPS: tuple[Step, ...] = (
    Step("speaker and card", prepare.speaker_and_card),
    Step("generation type", prepare.generation_type),
    Step("history scripts", prepare.history_scripts),
    Step("route", prepare.route),
    Step("native items", prepare.native_items_step),
    Step("world info", world_info),
    Step("render", preset.render),
    Step("rearrange", preset.rearrange),
    Step("openers", preset.openers),
    Step("in-chat additions", placing.in_chat),
    Step("budget", placing.budget),
    Step("inject", placing.inject),
    Step("terminal note", placing.terminal_note),
    Step("closing items", placing.closing),
    Step("squash", placing.squash),
    Step("identity macros", finish.identity_macros),
    Step("shape", finish.shape),
    Step("count", finish.count),
)
# Steps a request may have nothing for, each with its bit in `_idle`'s answer: one known to do nothing
# is not called (a call is a noticeable share of the smallest assembly, docs/assembly.md#speed-this-2-core-machine).
_IDLE = ("speaker and card", "history scripts", "route", "world info", "budget", "closing items", "shape")
# The steps from the openers to the messages, kept with the document for the same inputs
# (engine/assemble/kept_tail.py) when the request has no card or group, no history scripts, no World
# Info, no budget and nothing to close with: those bits of `_idle`'s answer all set.
_TAIL = ("openers", "in-chat additions", "inject", "terminal note", "squash", "identity macros")
_KEEPS_TAIL = sum(
    1 << _IDLE.index(name)
    for name in ("speaker and card", "history scripts", "world info", "budget", "closing items")
)


def _runs(mask: int) -> tuple[Callable[[State], None], ...]:
    """The steps a request whose `_idle` answer is `mask` runs, in order."""
    steps = [
        step for step in STEPS if not any(mask >> k & 1 for k, name in enumerate(_IDLE) if name == step.name)
    ]
    runs = [step.run for step in steps]
    if mask & _KEEPS_TAIL == _KEEPS_TAIL:
        names = [step.name for step in steps]
        at = names.index(_TAIL[0])
        assert tuple(names[at : at + len(_TAIL)]) == _TAIL
        runs[at : at + len(_TAIL)] = [kept_tail(runs[at : at + len(_TAIL)])]
    return tuple(runs)


_RUNS_WITHOUT = tuple(_runs(mask) for mask in range(1 << len(_IDLE)))


def assemble(
    doc: BucketDocument,
    *,
    preset: CompiledPreset | None = None,
    style: str | None = None,
    provider: str | None = None,
    encoding: str = DEFAULT_ENCODING,
    server_id: int = 0,
    stm: StoredStm | None = None,
    seed: int | None = None,
    count_tokens: bool = True,
    generation: GenerationSettings | None = None,
    card: Card | None = None,
    regex_scripts: Sequence[CompiledScript] | None = None,
    count_for: str | None = None,
    world_info: WorldInfoInput | None = None,
    group: Group | None = None,
) -> Assembly:
    """The messages the bot would send for `doc`, rearranged by `preset` when one is given.

    `regex_scripts` are the regex scripts in running order (the server's, then the preset's, as
    switched on for the server); None means the preset's own enabled scripts. Their promptOnly
    scripts rewrite history messages (docs/regex.md#where-they-run).

    `style` overrides the preset's injection style; `provider` adds that provider's request body;
    `stm` replaces the document's inline short-term memory; `seed` overrides the document's seed
    (when neither is given one is drawn and returned); `count_tokens=False` skips the counting (zeros,
    for timing the assembly alone); `generation` (engine.sampling) is returned as the assembly's
    generation settings, goes into the provider's request body when it is for that provider, and its
    sentences about values changed to fit join the warnings; `card` is the server's active character
    (docs/cards.md: it fills the document's empty fields and overrides main and jailbreak); `count_for` is
    the provider the token counts are for when no `provider` is asked for (the server's,
    docs/assembly.md#tokens); `group` is the group of the document's `group` turn (docs/groups.md), `card`
    then being the speaker's card. Raises ValueError for an unknown style, provider or encoding.
    """
    request = Request(
        preset=preset,
        style=style,
        provider=provider,
        encoding=encoding,
        server_id=server_id,
        stm=stm,
        seed=seed,
        count_tokens=count_tokens,
        generation=generation,
        card=card,
        regex_scripts=regex_scripts,
        count_for=count_for,
        world_info=world_info,
        group=group,
    )
    return run(request, doc)


def run(request: Request, doc: BucketDocument) -> Assembly:
    """Every step in order over one state; the seed is resolved here, once."""
    request.check()
    seed = request.seed
    if seed is None:
        seed = doc.seed if doc.seed is not None else secrets.randbelow(2**31)
    state = State(request, doc, seed, request.preset)
    for step in _RUNS_WITHOUT[_idle(request, doc)]:
        step(state)
    return finish.result(state)


def _idle(request: Request, doc: BucketDocument) -> int:
    """The steps of `_IDLE` that would do nothing for this request, as bits: no card and no group turn
    (the document stays as given), no regex script to run on the history, no impersonation, no World
    Info, no budget, a normal turn without a prefill (nothing to close with), no provider body."""
    preset = request.preset
    alone = request.card is None and request.group is None
    return (
        alone
        | (request.regex_scripts is None and (preset is None or not preset.regex_scripts)) << 1
        | (alone and not doc.impersonation) << 2
        | (request.world_info is None) << 3
        | (alone and doc.budget is None) << 4
        | (
            alone
            and doc.generation_type == "normal"
            and (preset is None or not preset.settings.assistant_prefill.strip())
        )
        << 5
        | (request.provider is None and request.generation is None) << 6
    )
