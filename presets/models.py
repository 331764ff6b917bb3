"""Stored presets: the upload as it came (secrets blanked), its parsed nodes, settings and summary."""

from __future__ import annotations

from django.conf import settings as django_settings
from django.db import models
from django.db.models import Q

from engine import DEFAULT_ENCODING as DEFAULT_TOKENIZER
from engine import count_text
from servers.models import Server

NAME_MAX_LENGTH = 100
PREVIEW_CHARS = 100
SHAPE_LABELS = {
    "prompt_manager": "Prompt Manager preset",
    "pre_prompt_manager": "Old chat preset (before the Prompt Manager)",
    "text_completion": "Text-completion preset (converted)",
    "system_prompt": "System prompt preset",
}


class InjectionStyle(models.TextChoices):
    MERGE = "merge", "Merge into history messages"
    STANDALONE = "standalone", "Standalone messages (SillyTavern)"


class NodeKind(models.TextChoices):
    MARKER = "marker", "Marker"
    CONTENT = "content", "Content"
    COMMENT = "comment", "Comment"


class Preset(models.Model):
    """One imported SillyTavern preset of a server. At most one per server is active."""

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="presets")
    name = models.CharField(max_length=NAME_MAX_LENGTH)
    shape = models.CharField(max_length=32)
    is_active = models.BooleanField(default=False)
    injection_style = models.CharField(
        max_length=16, choices=InjectionStyle.choices, default=InjectionStyle.MERGE
    )
    stored_text = models.TextField(help_text="The upload as text, secrets blanked, key order preserved.")
    # The file's `extensions.regex_scripts` and reasoning delimiters (presets.regex_source), taken
    # from the stored text once at import; None only for a row stored before it was kept.
    regex_source = models.JSONField(null=True, blank=True, default=None)
    settings = models.JSONField(default=dict, blank=True, help_text="Settings that shape the prompt.")
    summary = models.JSONField(default=dict, blank=True, help_text="The import summary (docs/import.md).")
    sampling = models.JSONField(
        default=dict, blank=True, help_text="The sampler settings the file sets (engine.sampling names)."
    )
    carried_over = models.PositiveIntegerField(
        null=True, blank=True, help_text="Node choices carried over from the preset this one replaced."
    )
    node_count = models.PositiveIntegerField(default=0)
    source_filename = models.CharField(max_length=255, blank=True)
    created_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    version = models.PositiveIntegerField(default=0, help_text="The number of its current version.")

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["server", "name"], name="preset_name_unique_per_server"),
            models.UniqueConstraint(
                fields=["server"], condition=Q(is_active=True), name="one_active_preset_per_server"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def shape_label(self) -> str:
        return SHAPE_LABELS.get(self.shape, self.shape)


class PresetNode(models.Model):
    """One entry of a preset's prompt order, in `position` order."""

    # Not a column: the tokenizer `tokens` counts in, set by views to the server's (None: the default).
    encoding: str | None = None

    preset = models.ForeignKey(Preset, on_delete=models.CASCADE, related_name="nodes")
    position = models.PositiveIntegerField()
    # Text, not varchar: real presets carry long identifiers and names, and one odd file must not fail.
    identifier = models.TextField()
    name = models.TextField(blank=True)
    kind = models.CharField(max_length=16, choices=NodeKind.choices)
    role = models.CharField(max_length=16, default="system")
    content = models.TextField(blank=True)
    enabled = models.BooleanField(default=True)
    injection_position = models.IntegerField(default=0)
    injection_depth = models.IntegerField(default=4)
    injection_order = models.IntegerField(default=100)
    injection_trigger = models.JSONField(default=list, blank=True)
    forbid_overrides = models.BooleanField(default=False)
    prefix = models.TextField(blank=True)
    suffix = models.TextField(blank=True)

    class Meta:
        ordering = ["preset", "position"]
        constraints = [
            models.UniqueConstraint(fields=["preset", "position"], name="preset_node_position_unique")
        ]

    def __str__(self) -> str:
        return self.name or self.identifier

    @property
    def toggleable(self) -> bool:
        """The nodes the counts and the bulk switches cover: every node but comments and chatHistory."""
        return self.kind != NodeKind.COMMENT and self.identifier != "chatHistory"

    @property
    def switchable(self) -> bool:
        """The nodes an admin may switch one by one: chatHistory too (off, no conversation is sent)."""
        return self.kind != NodeKind.COMMENT

    @property
    def is_depth_injection(self) -> bool:
        return self.kind != NodeKind.MARKER and self.injection_position == 1

    @property
    def tokens(self) -> int:
        """Tokens of the text the node contributes (macros unrendered, the server's tokenizer): a
        content node's text, a marker's prefix/suffix, nothing for a comment. Cached by text."""
        # Views set `encoding` to the server's tokenizer (docs/assembly.md#tokens); the default otherwise.
        encoding = self.encoding or DEFAULT_TOKENIZER
        if self.kind == NodeKind.CONTENT:
            return count_text(self.content, encoding)
        return count_text(self.prefix + self.suffix, encoding) if self.kind == NodeKind.MARKER else 0

    @property
    def preview(self) -> str:
        """The first line-ish of the text, for the node list (plain slicing: templates' truncation
        normalises the whole text, which costs more than the rest of the row on big presets)."""
        text = " ".join(self.content[: PREVIEW_CHARS + 40].split())
        return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


class SamplingMode(models.TextChoices):
    PRESET = "preset", "The preset's sampling"
    SERVER = "server", "The server's own values"
    MERGED = "merged", "The preset's, with the server's values winning per field"


class SamplingProvider(models.TextChoices):
    OPENAI = "openai", "OpenAI"
    ANTHROPIC = "anthropic", "Anthropic"
    GEMINI = "gemini", "Gemini"


class ServerSampling(models.Model):
    """A server's choice of what sampler settings reach the model; no row means the preset's."""

    server = models.OneToOneField(Server, on_delete=models.CASCADE, primary_key=True, related_name="sampling")
    mode = models.CharField(max_length=16, choices=SamplingMode.choices, default=SamplingMode.PRESET)
    provider = models.CharField(
        max_length=16,
        choices=SamplingProvider.choices,
        default=SamplingProvider.OPENAI,
        help_text="The provider the bot sends to; the preset page shows the effective values for it.",
    )
    values = models.JSONField(
        default=dict, blank=True, help_text="The server's own values (SillyTavern names), checked when set."
    )
    updated_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"sampling of server {self.server_id}"


class VersionKind(models.TextChoices):
    INITIAL = "initial", "State when versions began"
    IMPORT = "import", "Upload"
    REPLACE = "replace", "Replaced by re-upload"
    EDIT = "edit", "Edit"
    TOGGLE = "toggle", "Nodes switched on or off"
    SETTINGS = "settings", "Settings"
    ROLLBACK = "rollback", "Rollback"


class PresetNodeBlob(models.Model):
    """One distinct node of a preset (without its enabled flag), compressed JSON; versions share them."""

    preset = models.ForeignKey(Preset, on_delete=models.CASCADE, related_name="node_blobs")
    digest = models.CharField(max_length=64)
    data = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["preset", "digest"], name="preset_node_blob_unique_digest")
        ]

    def __str__(self) -> str:
        return self.digest[:12]


class PresetVersion(models.Model):
    """An immutable state of a preset: its nodes (blob references and enabled flags) and settings."""

    preset = models.ForeignKey(Preset, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    kind = models.CharField(max_length=16, choices=VersionKind.choices)
    reason = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_label = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    manifest = models.BinaryField(help_text="zlib'd JSON: blob ids with enabled flags, and settings.")
    node_count = models.PositiveIntegerField(default=0)
    enabled_count = models.PositiveIntegerField(default=0)
    shape = models.CharField(max_length=32, blank=True)
    source = models.BinaryField(null=True, blank=True, help_text="zlib'd upload, on uploads only.")

    class Meta:
        ordering = ["preset", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["preset", "number"], name="preset_version_number_unique")
        ]

    def __str__(self) -> str:
        return f"version {self.number}"


class ChannelPreset(models.Model):
    """A channel's (or thread's) own preset, winning over the server's active one there."""

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="channel_presets")
    channel_id = models.BigIntegerField(help_text="The Discord channel or thread id.")
    preset = models.ForeignKey(Preset, on_delete=models.CASCADE, related_name="channel_uses")
    set_by = models.ForeignKey(
        django_settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["server", "channel_id"]
        constraints = [
            models.UniqueConstraint(fields=["server", "channel_id"], name="one_preset_per_channel")
        ]

    def __str__(self) -> str:
        return f"channel {self.channel_id}: {self.preset_id}"
