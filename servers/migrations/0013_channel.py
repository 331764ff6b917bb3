"""One table for Discord channels: servers' `Channel`, which takes over memory's channel rows and
the channels of the pushed directory (0014 moves the data, memory 0006 points its entries here,
0015 drops the directory's channel list)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("servers", "0012_audit_actions_of_recall_and_private_context"),
    ]

    operations = [
        migrations.CreateModel(
            name="Channel",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("discord_id", models.BigIntegerField()),
                ("name", models.CharField(blank=True, max_length=100)),
                ("is_private", models.BooleanField(default=False)),
                (
                    "listed",
                    models.BooleanField(default=False, help_text="In the bot's latest directory push."),
                ),
                (
                    "owner",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="owned_channels",
                        to="servers.server",
                    ),
                ),
                (
                    "parent",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="threads",
                        to="servers.channel",
                    ),
                ),
                (
                    "server",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="channels",
                        to="servers.server",
                    ),
                ),
            ],
            options={
                "ordering": ["owner_id", "name", "discord_id"],
                "constraints": [
                    models.UniqueConstraint(fields=("owner", "discord_id"), name="one_channel_per_owner_and_id")
                ],
            },
        ),
    ]
