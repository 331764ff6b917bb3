"""Stored lorebooks: the upload as it came, its entries (SillyTavern's fields as JSON), and the
server's World Info settings (docs/worldinfo.md#import, docs/worldinfo.md#books-and-settings)."""

from __future__ import annotations

from django.conf import settings as django_settings
from django.db import models

from engine.worldinfo import POSITIONS, WorldInfoSettings, entry_tokens
from servers.models import Server

NAME_MAX_LENGTH = 100
KEYS_SHOWN = 50  # the entry table lists this many keys of an entry, then says how many more
_DEFAULTS = WorldInfoSettings()


class Lorebook(models.Model):
    """One imported lorebook of a server; any number may be active at once."""

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="lorebooks")
    name = models.CharField(max_length=NAME_MAX_LENGTH)
    is_active = models.BooleanField(default=True)
    original_text = models.TextField(help_text="The upload as text (NUL characters removed).")
    summary = models.JSONField(default=dict, blank=True, help_text="The import summary (docs/worldinfo.md).")
    source = models.CharField(max_length=32, default="world_info")
    entry_count = models.PositiveIntegerField(default=0)
    source_filename = models.CharField(max_length=255, blank=True)
    created_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["server", "name"], name="lorebook_name_unique_per_server"),
        ]

    def __str__(self) -> str:
        return self.name


class LorebookEntry(models.Model):
    """One World Info entry; `data` holds every field as SillyTavern writes it (unknown ones too)."""

    lorebook = models.ForeignKey(Lorebook, on_delete=models.CASCADE, related_name="entries")
    index = models.PositiveIntegerField(help_text="Place in the file.")
    uid = models.IntegerField()
    comment = models.TextField(blank=True)
    keys = models.JSONField(default=list, blank=True)
    position = models.IntegerField(default=0)
    order = models.IntegerField(default=100)
    enabled = models.BooleanField(default=True)
    constant = models.BooleanField(default=False)
    data = models.JSONField(default=dict)

    class Meta:
        ordering = ["lorebook", "index"]
        constraints = [
            models.UniqueConstraint(fields=["lorebook", "uid"], name="lorebook_entry_uid_unique"),
        ]

    def __str__(self) -> str:
        return self.comment or f"entry {self.uid}"

    @property
    def tokens(self) -> int:
        """The entry text's token count (default encoding), counted when a page shows the entry."""
        return entry_tokens(self.data.get("content") or "")

    @property
    def shown_keys(self) -> list[str]:
        """The first keys, as many as the entry table lists."""
        return self.keys[:KEYS_SHOWN]

    @property
    def more_keys(self) -> int:
        """How many keys the entry table leaves out."""
        return max(0, len(self.keys) - KEYS_SHOWN)

    @property
    def position_name(self) -> str:
        return POSITIONS.get(self.position, str(self.position))

    @property
    def flags(self) -> list[str]:
        """Short words for the entry's notable settings, for the entry table."""
        d = self.data
        words = []
        for field, word in (
            ("constant", "constant"),
            ("selective", ""),
            ("preventRecursion", "no recursion out"),
            ("excludeRecursion", "no recursion in"),
            ("ignoreBudget", "ignores budget"),
        ):
            if word and d.get(field):
                words.append(word)
        if d.get("delayUntilRecursion"):
            words.append(f"delay until recursion {d['delayUntilRecursion']}")
        for field in ("sticky", "cooldown", "delay"):
            if d.get(field):
                words.append(f"{field} {d[field]}")
        if d.get("group"):
            words.append(f"group {d['group']}")
        if d.get("probability", 100) != 100 and d.get("useProbability", True):
            words.append(f"{d['probability']} %")
        if d.get("triggers"):
            words.append("only " + ", ".join(d["triggers"]))
        if self.position == 4:
            words.append(f"depth {d.get('depth', 4)}")
        if self.position == 7 and d.get("outletName"):
            words.append(f"outlet {d['outletName']}")
        return words


class CompiledLorebook(models.Model):
    """The lorebook compiled for assembly (engine.worldinfo.book_to_bytes), written on import: each
    process loads it instead of compiling the book again. Switching entries on or off only records
    them in `switched` (applied on load with engine.worldinfo.switch_entries), so a toggle in a
    10 000-entry book does not rewrite the bytes."""

    lorebook = models.OneToOneField(Lorebook, on_delete=models.CASCADE, related_name="compiled")
    format = models.CharField(max_length=32, help_text="The engine's layout the bytes were written in.")
    data = models.BinaryField()
    switched = models.JSONField(
        default=dict,
        blank=True,
        help_text="Entries enabled (true) or disabled (false) by uid since the bytes were written.",
    )

    def __str__(self) -> str:
        return f"compiled {self.lorebook_id}"


class Strategy(models.TextChoices):
    CHARACTER_FIRST = "character_first", "Character first"
    GLOBAL_FIRST = "global_first", "Global first"
    EVENLY = "evenly", "Evenly"


class WorldInfoSettingsRow(models.Model):
    """A server's World Info settings; a server without a row uses SillyTavern's defaults."""

    server = models.OneToOneField(Server, on_delete=models.CASCADE, related_name="world_info_settings")
    scan_depth = models.IntegerField(default=_DEFAULTS.scan_depth)
    budget_percent = models.PositiveIntegerField(default=_DEFAULTS.budget_percent)
    budget_cap = models.PositiveIntegerField(default=_DEFAULTS.budget_cap)
    recursive = models.BooleanField(default=_DEFAULTS.recursive)
    max_recursion = models.PositiveIntegerField(default=_DEFAULTS.max_recursion)
    min_activations = models.PositiveIntegerField(default=_DEFAULTS.min_activations)
    min_activations_depth_max = models.PositiveIntegerField(default=_DEFAULTS.min_activations_depth_max)
    case_sensitive = models.BooleanField(default=_DEFAULTS.case_sensitive)
    match_whole_words = models.BooleanField(default=_DEFAULTS.match_whole_words)
    group_scoring = models.BooleanField(default=_DEFAULTS.group_scoring)
    include_names = models.BooleanField(default=_DEFAULTS.include_names)
    strategy = models.CharField(max_length=20, choices=Strategy.choices, default=_DEFAULTS.strategy)
    context_size = models.PositiveIntegerField(default=_DEFAULTS.context_size)

    def __str__(self) -> str:
        return f"World Info settings of {self.server_id}"

    def as_settings(self) -> WorldInfoSettings:
        """The engine's settings object."""
        return WorldInfoSettings(**{name: getattr(self, name) for name in SETTING_FIELDS})


SETTING_FIELDS = tuple(WorldInfoSettings.__dataclass_fields__)
