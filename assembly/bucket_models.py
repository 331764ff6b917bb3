"""Sample bucket documents kept per server for the preview (docs/assembly.md#the-bucket-document)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

__all__ = ["SampleBucket"]


class SampleBucket(models.Model):
    """A named bucket document (JSON, schema v1) a server keeps to preview its presets with."""

    server = models.ForeignKey("servers.Server", on_delete=models.CASCADE, related_name="sample_buckets")
    name = models.CharField(max_length=100)
    document = models.JSONField(help_text="A bucket document, schema version 1 (docs/assembly.md).")
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["server", "name"], name="one_sample_bucket_name_per_server")
        ]

    def __str__(self) -> str:
        return self.name
