"""The sample bucket document as named form fields, and back.

`SAMPLE_FIELDS` lists what the preview's form shows, one line per field. `document_from_form`
lays the posted fields over a base document (the JSON the page carried, so keys the form does not
show survive), `apply_row_op` adds, removes and moves rows, and `form_from_document` gives the
template what to show. Plain Python over a mapping with `getlist` (Django's QueryDict), so the
no-JavaScript form and the htmx form go through the same code; `parse_buckets` stays the judge of
what is valid.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from core.errors import UserError
from engine import AUTHORS_NOTE_POSITIONS, GENERATION_TYPES

PREFIX = "b-"

# Field kinds: how a value is shown and read back.
LINE = "line"  # one-line text; blank removes the key
TEXT = "text"  # multi-line text; blank removes the key
LINES = "lines"  # a list of short texts, one per line
BLOCKS = "blocks"  # a list of texts that may span lines: one box each, plus an empty one to add
NUMBER = "number"  # a whole number; blank removes the key
CHOICE = "choice"  # one of `choices`; "" (when offered) removes the key
JSON = "json"  # any JSON value, typed as JSON
ROWS = "rows"  # a list of objects, one row of `columns` each, with add / remove / move buttons

# Sections of the form, in page order; `open` ones start expanded.
SECTIONS = (
    ("prompts", "Names and prompts", False),
    ("knowledge", "Server knowledge", False),
    ("dialogue", "Sample dialogue and history", False),
    ("generation", "Budget and generation", False),
)


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    label: str
    kind: str = LINE
    choices: tuple[str, ...] = ()
    default: str = ""


@dataclass(frozen=True, slots=True)
class Field:
    path: str  # the key in the document; dots reach into an object ("budget.context")
    label: str
    kind: str
    section: str
    help: str = ""
    choices: tuple[str, ...] = ()
    columns: tuple[Column, ...] = ()
    drops_parent: bool = False  # blank: remove the whole enclosing object, not only this key

    @property
    def name(self) -> str:
        return PREFIX + self.path


HISTORY_COLUMNS = (
    Column("role", "Role", CHOICE, ("user", "assistant"), default="user"),
    Column("name", "Name"),
    Column("content", "Text", TEXT),
    Column("timestamp", "Time (ISO 8601)"),
)
DIALOGUE_COLUMNS = (Column("user", "{{user}} says", TEXT), Column("char", "{{char}} answers", TEXT))

SAMPLE_FIELDS: tuple[Field, ...] = (
    Field("names.user", "User name", LINE, "prompts", "{{user}}; “User” when blank"),
    Field("names.char", "Character name", LINE, "prompts", "{{char}}; “Assistant” when blank"),
    Field("system_prompt", "System prompt", TEXT, "prompts", "blank: the bot's built-in fallback"),
    Field("channel_prompt.text", "Channel prompt", TEXT, "prompts", drops_parent=True),
    Field("channel_prompt.mode", "Channel prompt mode", CHOICE, "prompts", choices=("append", "replace")),
    Field("persona_prompt", "Persona", TEXT, "prompts", "{{description}}"),
    Field("personality", "Personality", LINES, "prompts", "one trait per line"),
    Field("scenario", "Scenario", TEXT, "prompts", "the scenario marker; World Info may scan it"),
    Field("user_persona", "User's persona", TEXT, "prompts", "{{persona}}: the speaking user's description"),
    Field("authors_note.text", "Author's Note", TEXT, "prompts", drops_parent=True),
    Field(
        "authors_note.position",
        "Author's Note goes",
        CHOICE,
        "prompts",
        "in the chat (default), or beside the main prompt",
        choices=("", *AUTHORS_NOTE_POSITIONS),
    ),
    Field("authors_note.depth", "Author's Note depth", NUMBER, "prompts", "in the chat; 4 when blank"),
    Field(
        "authors_note.role",
        "Author's Note role",
        CHOICE,
        "prompts",
        choices=("", "system", "user", "assistant"),
    ),
    Field("authors_note.interval", "Author's Note every N user messages", NUMBER, "prompts", "1 when blank"),
    Field("server_info", "Server info", TEXT, "knowledge"),
    Field("server_memories", "Server memories", BLOCKS, "knowledge"),
    Field("emojis", "Emojis", LINES, "knowledge", "one per line"),
    Field("stickers", "Stickers", LINES, "knowledge", "one per line"),
    Field("users_in_conversation", "Users in the conversation", TEXT, "knowledge"),
    Field("documents", "Documents", BLOCKS, "knowledge"),
    Field("conditioning", "Conditioning", TEXT, "knowledge"),
    Field("sample_dialogues", "Sample dialogue pairs", ROWS, "dialogue", columns=DIALOGUE_COLUMNS),
    Field("history", "History", ROWS, "dialogue", "oldest first", columns=HISTORY_COLUMNS),
    Field("budget.context", "Context window (tokens)", NUMBER, "generation", drops_parent=True),
    Field("budget.reply", "Reserved for the reply (tokens)", NUMBER, "generation"),
    Field("generation_type", "Generation type", CHOICE, "generation", choices=("", *GENERATION_TYPES)),
    Field("quiet_prompt", "Quiet prompt", TEXT, "generation", "sent last for a quiet generation"),
    Field(
        "chat_length",
        "Messages in the channel so far",
        NUMBER,
        "generation",
        "World Info timers; blank: the history's length",
    ),
    Field(
        "world_info_state",
        "World Info timed state",
        JSON,
        "generation",
        "what the last assembly returned in world_info.state",
    ),
)


class FormData(Protocol):
    def get(self, key: str, default: Any = None) -> Any: ...
    def getlist(self, key: str) -> list[Any]: ...
    def __contains__(self, key: object) -> bool: ...


class SampleFormError(UserError, ValueError):
    """A field could not be read; `message` is one sentence naming it."""


@dataclass(frozen=True, slots=True)
class ShownField:
    """One field as the template shows it: `value` (a string), `items` (BLOCKS) or `rows` (ROWS)."""

    field: Field
    value: str = ""
    items: tuple[str, ...] = ()
    rows: tuple[tuple[tuple[Column, str, str], ...], ...] = ()  # per row: (column, input name, value)

    @property
    def name(self) -> str:
        return self.field.name


@dataclass(frozen=True, slots=True)
class ShownSection:
    key: str
    label: str
    open: bool
    fields: tuple[ShownField, ...]

    @property
    def counts(self) -> str:
        """How many rows each table of the section holds, for its folded header."""
        return " · ".join(
            f"{f.field.label.lower()}: {len(f.rows)}" for f in self.fields if f.field.kind == ROWS
        )


# --- posted fields -> document -------------------------------------------------------------------


def document_from_form(data: FormData, base: Mapping[str, Any] | None) -> dict[str, Any]:
    """`base` (a decoded bucket document, or None) with every form field laid over it; raises
    SampleFormError when a JSON field does not parse."""
    document = copy.deepcopy(dict(base)) if isinstance(base, Mapping) else {"version": 1}
    dropped: set[str] = set()
    for field in SAMPLE_FIELDS:
        if field.name not in data and f"{field.name}-rows" not in data:
            continue  # a form without the field (another page, an older form) leaves the key alone
        value = _read(field, data)
        parent_path = field.path.rpartition(".")[0]
        if value is None and field.drops_parent and parent_path:
            dropped.add(parent_path)
        _set(document, field.path, value)
    for parent_path in dropped:
        _set(document, parent_path, None)
    return document


def _read(field: Field, data: FormData) -> Any:
    if field.kind == ROWS:
        return _read_rows(field, data)
    if field.kind == BLOCKS:
        return [text for text in (_clean(v) for v in data.getlist(field.name)) if text.strip()]
    raw = _clean(data.get(field.name, ""))
    if field.kind == LINES:
        return [line.strip() for line in raw.split("\n") if line.strip()]
    if not raw.strip():
        return None
    if field.kind == NUMBER:
        text = raw.strip()
        return int(text) if text.lstrip("-").isdigit() and len(text) < 19 else text
    if field.kind == JSON:
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise SampleFormError(f"{field.label} is not valid JSON: {exc.msg}.") from None
    if field.kind == LINE:
        return raw.strip()
    return raw


def _read_rows(field: Field, data: FormData) -> list[dict[str, Any]]:
    count = _count(data.get(f"{field.name}-rows", "0"))
    rows = []
    for index in range(count):
        row: dict[str, Any] = {}
        for column in field.columns:
            value = _clean(data.get(f"{field.name}-{index}-{column.key}", ""))
            if column.kind == CHOICE:
                value = value if value in column.choices else column.default
            if value or column.kind in (TEXT, CHOICE):
                row[column.key] = value
        rows.append(row)
    return rows


def _count(text: Any) -> int:
    text = str(text or "").strip()
    return min(int(text), 5000) if text.isdigit() and len(text) < 6 else 0


def _clean(value: Any) -> str:
    """Browsers send textareas with CRLF line ends; the document keeps LF."""
    return str(value or "").replace("\r\n", "\n").replace("\r", "\n")


def _set(document: dict[str, Any], path: str, value: Any) -> None:
    *parents, key = path.split(".")
    target = document
    for part in parents:
        inner = target.get(part)
        if value is None and not isinstance(inner, dict):
            return
        if not isinstance(inner, dict):
            inner = target[part] = {}
        target = inner
    if value is None:
        target.pop(key, None)
    else:
        target[key] = value
    if value is None and parents and not target:
        _set(document, ".".join(parents), None)


# --- row buttons --------------------------------------------------------------------------------


def apply_row_op(document: dict[str, Any], op: str) -> dict[str, Any]:
    """The document after a row button: "<path>:add", "<path>:remove:<i>", "<path>:up:<i>",
    "<path>:down:<i>". Unknown or out-of-range buttons change nothing."""
    path, _, rest = op.partition(":")
    field = next((f for f in SAMPLE_FIELDS if f.path == path and f.kind == ROWS), None)
    if field is None or not isinstance(document.get(path, []), list):
        return document
    rows = list(document.get(path) or [])
    action, _, index_text = rest.partition(":")
    index = int(index_text) if index_text.isdigit() else -1
    if action == "add":
        rows.append(_new_row(field, rows))
    elif action == "remove" and 0 <= index < len(rows):
        del rows[index]
    elif action == "up" and 0 < index < len(rows):
        rows[index - 1], rows[index] = rows[index], rows[index - 1]
    elif action == "down" and 0 <= index < len(rows) - 1:
        rows[index], rows[index + 1] = rows[index + 1], rows[index]
    document[path] = rows
    return document


def _new_row(field: Field, rows: list[Any]) -> dict[str, str]:
    row = {column.key: column.default for column in field.columns if column.kind in (TEXT, CHOICE)}
    if field.path == "history" and rows and isinstance(rows[-1], dict) and rows[-1].get("role") == "user":
        row["role"] = "assistant"  # a new line answers the last one
    return row


# --- document -> what the form shows -------------------------------------------------------------


def form_from_document(document: Any) -> tuple[ShownSection, ...]:
    """The form's sections with every field's current value, read from a decoded document (values
    of the wrong type are shown as JSON so nothing is hidden; `parse_buckets` reports them)."""
    doc = document if isinstance(document, dict) else {}
    shown = [_shown(field, _get(doc, field.path)) for field in SAMPLE_FIELDS]
    return tuple(
        ShownSection(
            key=key, label=label, open=is_open, fields=tuple(s for s in shown if s.field.section == key)
        )
        for key, label, is_open in SECTIONS
    )


def _shown(field: Field, value: Any) -> ShownField:
    if field.kind == ROWS:
        rows = value if isinstance(value, list) else []
        return ShownField(
            field=field,
            rows=tuple(
                tuple(
                    (column, f"{field.name}-{index}-{column.key}", _as_text(_cell(row, column)))
                    for column in field.columns
                )
                for index, row in enumerate(rows)
            ),
        )
    if field.kind == BLOCKS:
        items = value if isinstance(value, list) else ([] if value is None else [value])
        return ShownField(field=field, items=(*(_as_text(item) for item in items), ""))
    if field.kind == LINES and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ShownField(field=field, value="\n".join(value))
    if field.kind == JSON:
        return ShownField(
            field=field, value="" if value is None else json.dumps(value, ensure_ascii=False, indent=2)
        )
    return ShownField(field=field, value=_as_text(value))


def _cell(row: Any, column: Column) -> Any:
    return row.get(column.key, column.default) if isinstance(row, dict) else ""


def _get(document: dict[str, Any], path: str) -> Any:
    value: Any = document
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
