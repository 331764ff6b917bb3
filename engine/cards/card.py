"""A character card as Tavernkeep keeps it (docs/cards.md): the text fields, the depth prompt, the card's own
regex scripts and its embedded book, whatever version (V1, V2, V3) it came in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The text fields, in the order the card page shows them.
TEXT_FIELDS = (
    "name",
    "description",
    "personality",
    "scenario",
    "first_mes",
    "mes_example",
    "system_prompt",
    "post_history_instructions",
    "creator_notes",
    "creator",
    "character_version",
)


@dataclass(frozen=True, slots=True)
class DepthPrompt:
    prompt: str
    depth: int = 4
    role: str = "system"


@dataclass(frozen=True, slots=True)
class Card:
    spec: str  # "chara_card_v1" | "chara_card_v2" | "chara_card_v3"
    name: str
    description: str = ""
    personality: str = ""
    scenario: str = ""
    first_mes: str = ""
    mes_example: str = ""
    system_prompt: str = ""
    post_history_instructions: str = ""
    creator_notes: str = ""
    creator: str = ""
    character_version: str = ""
    alternate_greetings: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    depth_prompt: DepthPrompt | None = None
    regex_scripts: tuple[dict[str, Any], ...] = ()
    character_book: dict[str, Any] | None = None
    extensions: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for storage and caches (`from_dict` reads it back)."""
        out = {name: getattr(self, name) for name in ("spec", *TEXT_FIELDS)}
        out["alternate_greetings"] = list(self.alternate_greetings)
        out["tags"] = list(self.tags)
        out["depth_prompt"] = (
            None
            if self.depth_prompt is None
            else {
                "prompt": self.depth_prompt.prompt,
                "depth": self.depth_prompt.depth,
                "role": self.depth_prompt.role,
            }
        )
        out["regex_scripts"] = list(self.regex_scripts)
        out["character_book"] = self.character_book
        out["extensions"] = self.extensions
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Card:
        depth = data.get("depth_prompt")
        return cls(
            **{name: data.get(name) or "" for name in ("spec", *TEXT_FIELDS)},
            alternate_greetings=tuple(data.get("alternate_greetings") or ()),
            tags=tuple(data.get("tags") or ()),
            depth_prompt=DepthPrompt(**depth) if depth else None,
            regex_scripts=tuple(data.get("regex_scripts") or ()),
            character_book=data.get("character_book"),
            extensions=dict(data.get("extensions") or {}),
        )

    def filled_fields(self) -> list[str]:
        """The names of the non-empty text fields (the import summary's `fields`)."""
        return [name for name in TEXT_FIELDS if str(getattr(self, name)).strip()]

    def to_v3(self, *, book: dict[str, Any] | None = None) -> dict[str, Any]:
        """The card as a `chara_card_v3` document (SillyTavern reads it back), with `book` embedded."""
        extensions = dict(self.extensions)
        if self.depth_prompt is not None:
            extensions["depth_prompt"] = {
                "prompt": self.depth_prompt.prompt,
                "depth": self.depth_prompt.depth,
                "role": self.depth_prompt.role,
            }
        if self.regex_scripts:
            extensions["regex_scripts"] = list(self.regex_scripts)
        data: dict[str, Any] = {name: getattr(self, name) for name in TEXT_FIELDS}
        data["alternate_greetings"] = list(self.alternate_greetings)
        data["tags"] = list(self.tags)
        data["group_only_greetings"] = []
        data["extensions"] = extensions
        if book is not None:
            data["character_book"] = book
        # V1 readers look at the top level; SillyTavern writes the main fields there too.
        legacy = {
            name: data[name] for name in ("name", "description", "personality", "scenario", "first_mes")
        }
        legacy["mes_example"] = data["mes_example"]
        return {**legacy, "spec": "chara_card_v3", "spec_version": "3.0", "data": data}

    def to_v2(self, *, book: dict[str, Any] | None = None) -> dict[str, Any]:
        """The same card as `chara_card_v2` (the PNG's `chara` chunk, for older readers)."""
        v3 = self.to_v3(book=book)
        data = {key: value for key, value in v3["data"].items() if key != "group_only_greetings"}
        return {"spec": "chara_card_v2", "spec_version": "2.0", "data": data}
