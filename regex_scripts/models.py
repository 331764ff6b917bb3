"""A server's own regex scripts, and per-server switches for the scripts its presets ship
(docs/regex.md#scripts-and-their-engine)."""

from __future__ import annotations

from django.db import models

from presets.models import Preset
from servers.models import Server


class ServerScript(models.Model):
    """One script of the server's own list (run before the preset's, as SillyTavern's global scripts)."""

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="regex_scripts")
    position = models.PositiveIntegerField()
    data = models.JSONField(help_text="The script in SillyTavern's export shape.")
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "id"]
        indexes = [models.Index(fields=["server", "position"])]

    def __str__(self) -> str:
        return str(self.data.get("scriptName") or self.data.get("findRegex") or self.pk)


class PresetScriptSwitch(models.Model):
    """This server's choice for one script a preset ships: on or off, whatever the file says."""

    # The server is the preset's; kept here so a request reads its switches without the presets table.
    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="regex_switches")
    preset = models.ForeignKey(Preset, on_delete=models.CASCADE, related_name="regex_switches")
    script_key = models.CharField(max_length=255, help_text="The script's id, or #position without one.")
    enabled = models.BooleanField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["preset", "script_key"], name="regex_switch_unique_per_preset")
        ]

    def __str__(self) -> str:
        return f"{self.script_key}: {'on' if self.enabled else 'off'}"
