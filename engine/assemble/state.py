"""The one object an assembly's steps read and write (docs/assembly.md#order-of-work).

`Request` is what the caller asked for, checked once; `State` is the work in progress: each step
reads what earlier steps left on it and adds its own part.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..buckets import BucketDocument
from ..cards import Card, DepthPrompt, card_env
from ..compiled import CompiledPreset
from ..groups import Group
from ..macros import MacroEnv
from ..parts import Item, Message, Notes, Source, Transform
from ..regex import CompiledScript, RegexBudget, RegexRequest
from ..sampling import GenerationSettings
from ..tokens import DEFAULT_ENCODING, ENCODINGS, TokenReport
from ..vocabulary import PROVIDERS, STYLES
from ..worldinfo import WorldInfoContribution, WorldInfoInput
from .formats import Formats
from .native import NAMES_DEFAULT, doc_reuse, macro_env
from .rearrange import Arrangement, plan_reuse
from .result import StoredStm
from .reuse import Reuse


@dataclass(slots=True)
class Request:
    """The caller's choices for one assembly (the keywords of `assemble`, whose docstring says what
    each one does). No step changes it (not frozen only because a frozen init costs a microsecond,
    a noticeable share of the smallest assembly)."""

    preset: CompiledPreset | None = None
    style: str | None = None
    provider: str | None = None
    encoding: str = DEFAULT_ENCODING
    server_id: int = 0
    stm: StoredStm | None = None
    seed: int | None = None
    count_tokens: bool = True
    generation: GenerationSettings | None = None
    card: Card | None = None
    regex_scripts: Sequence[CompiledScript] | None = None
    count_for: str | None = None
    world_info: WorldInfoInput | None = None
    group: Group | None = None

    def check(self) -> None:
        """Raise ValueError for an unknown style, provider or encoding."""
        if self.style is not None and self.style not in STYLES:
            raise ValueError(f"Unknown injection style {self.style!r}: use merge or standalone.")
        for provider in (self.provider, self.count_for):
            if provider is not None and provider not in PROVIDERS:
                raise ValueError(f"Unknown provider {provider!r}: use openai, anthropic or gemini.")
        if self.encoding not in ENCODINGS:
            raise ValueError(f"Unknown encoding {self.encoding!r}: use o200k_base or cl100k_base.")


@dataclass(slots=True, init=False)
class State:
    """One assembly in progress. The fields are grouped by the step that makes them (`MAKES` below
    names each step's group; docs/architecture.md#the-assemblys-state). Its `__init__` is written out
    (the defaults below, set directly): the generated one costs a microsecond, a few percent of the
    smallest assembly (tests/engine/assemble/test_state.py holds the two alike)."""

    # given, before any step
    request: Request
    doc: BucketDocument  # replaced by "speaker and card" and "generation type"
    seed: int  # resolved once, before any step: the request's, else the document's, else drawn
    notes: Notes = field(default_factory=Notes)
    preset: CompiledPreset | None = None  # the request's, until "route" sends an assembly native
    regex_budget: RegexBudget = field(default_factory=RegexBudget)  # one for the whole assembly
    # speaker and card
    card: Card | None = None
    depth_prompts: tuple[DepthPrompt, ...] = ()  # a join mode's members' (docs/groups.md)
    # history scripts: the scripts in running order, and the history texts the promptOnly scripts changed
    regex_scripts: tuple[CompiledScript, ...] = ()
    rewritten: dict[int, tuple[str, tuple[Transform, ...]]] = field(default_factory=dict)
    # native items ("world info" adds its entries to the items)
    names: int = NAMES_DEFAULT  # the preset's names_behavior: where speaker names go
    items: tuple[Item, ...] = ()
    # world info
    world_info: WorldInfoContribution | None = None
    # render ("rearrange" and "closing items" carry the variables on)
    rendered: Mapping[int, str] = field(default_factory=dict)  # node texts by node position
    expanded: frozenset[str] = frozenset()
    card_sources: dict[int, tuple[Source, ...]] = field(default_factory=dict)
    style: str = "merge"
    variables: dict[str, Any] = field(default_factory=dict)
    global_variables: dict[str, Any] = field(default_factory=dict)
    unknown_macros: tuple[str, ...] = ()
    # rearrange ("inject" places the injections into the arrangement)
    arrangement: Arrangement = field(default_factory=Arrangement)
    formats: Formats | None = None
    # openers
    nudge: Item | None = None  # a group's nudge, for the end of the history (docs/groups.md)
    # in-chat additions
    continued: Item | None = None  # a continued message, moved to the very end
    # inject
    injected: bool = False  # some depth injection was placed
    # terminal note: the final list, and where the history is in it ("closing items" and "squash" amend both)
    ordered: list[Item] = field(default_factory=list)
    history: tuple[int, int] = (0, 0)  # [start, stop)
    sample_note: bool = False  # the assembler's note after trailing sample dialogues was added
    # squash: the history's range holds the document's history items as they are, in order
    history_as_given: bool = False
    # identity macros
    messages: tuple[Message, ...] = ()
    blank: list[Item] = field(default_factory=list)  # items that came out empty, dropped
    # shape
    payload: dict[str, Any] | None = None
    # count
    tokens: TokenReport | None = None

    def __init__(
        self, request: Request, doc: BucketDocument, seed: int, preset: CompiledPreset | None = None
    ) -> None:
        self.request, self.doc, self.seed, self.preset = request, doc, seed, preset
        self.notes, self.regex_budget = Notes(), RegexBudget()
        self.card, self.depth_prompts = None, ()
        self.regex_scripts, self.rewritten = (), {}
        self.names, self.items = NAMES_DEFAULT, ()
        self.world_info = None
        self.rendered, self.expanded, self.card_sources, self.style = {}, frozenset(), {}, "merge"
        self.variables, self.global_variables, self.unknown_macros = {}, {}, ()
        self.arrangement, self.formats = Arrangement(), None
        self.nudge = self.continued = None
        self.injected = False
        self.ordered, self.history, self.sample_note = [], (0, 0), False
        self.history_as_given = False
        self.messages, self.blank = (), []
        self.payload = self.tokens = None

    def preset_env(self) -> MacroEnv:
        """What the preset's macros read: the native blocks, and World Info's outlets when it took part."""
        env = macro_env(self.doc, self.items, server_id=self.request.server_id)
        if self.world_info is not None:
            env = replace(env, outlets=self.world_info.outlets)
        return env if self.card is None else card_env(env, self.card)

    def regex_request(self) -> RegexRequest:
        """What the promptOnly regex scripts read (the history's and World Info's), spending the
        assembly's one regex budget."""
        doc = self.doc
        return RegexRequest(
            seed=self.seed,
            user=doc.user_name,
            char=doc.char_name,
            env=MacroEnv(server_id=self.request.server_id),
            variables=doc.variables,
            global_variables=doc.global_variables,
            budget=self.regex_budget,
        )

    def reuses(self) -> tuple[Reuse, ...]:
        """Where this assembly finds what an earlier one made of the same items (engine/assemble/reuse.py)."""
        doc, preset = self.doc, self.preset
        table = doc.memo.reuse or doc_reuse(doc)  # the kept tables without a call (two steps ask)
        if preset is None:
            return (table,)
        return (preset.memo.reuses.get(doc.generation_type) or plan_reuse(preset, doc.generation_type), table)


GIVEN = frozenset({"request", "doc", "seed", "notes", "preset", "regex_budget"})
"""The fields set before any step runs."""

MAKES: dict[str, frozenset[str]] = {
    "speaker and card": frozenset({"card", "depth_prompts"}),
    "history scripts": frozenset({"regex_scripts", "rewritten"}),
    "native items": frozenset({"names", "items"}),
    "world info": frozenset({"world_info"}),
    "render": frozenset(
        {"rendered", "expanded", "card_sources", "style", "variables", "global_variables", "unknown_macros"}
    ),
    "rearrange": frozenset({"arrangement", "formats"}),
    "openers": frozenset({"nudge"}),
    "in-chat additions": frozenset({"continued"}),
    "inject": frozenset({"injected"}),
    "terminal note": frozenset({"ordered", "history", "sample_note"}),
    "squash": frozenset({"history_as_given"}),
    "identity macros": frozenset({"messages", "blank"}),
    "shape": frozenset({"payload"}),
    "count": frozenset({"tokens"}),
}
"""Each step's group: the fields it makes, which only later steps read. A step named here or not
may also amend fields of an earlier group, as `AMENDS` says; no step assigns any other field
(tests/engine/assemble/test_order_of_work.py)."""

AMENDS: dict[str, frozenset[str]] = {
    "speaker and card": frozenset({"doc"}),  # the card fills the document's empty fields
    "generation type": frozenset({"doc"}),  # the send-if-empty message
    "route": frozenset({"preset"}),  # an assembly sent native
    "world info": frozenset({"items"}),  # the entries' blocks join the native items
    "rearrange": frozenset({"variables", "global_variables"}),  # the openers' formats set variables
    "inject": frozenset({"arrangement"}),
    "closing items": frozenset({"ordered", "variables", "global_variables"}),
    "squash": frozenset({"ordered", "history"}),
}
"""The fields of earlier groups a step may replace."""
