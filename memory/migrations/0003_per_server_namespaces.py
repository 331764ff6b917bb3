"""Every memory record belongs to one server (issue 35).

- Channels get their own row id and keep the Discord id in `discord_id`; `owner` is the server whose
  bot reported the channel, so the same Discord id under two servers is two rows. Existing rows keep
  their id (it was the Discord id), so entries and threads still point at them.
- Entries get `owner`, the server whose bot stored them, DM entries included.
- A user's display name moves to `DiscordUserName`, one per (user, server).

Existing records belong to the server that first used them: a server channel and its entries to
their server; a user's name to the server of the user's oldest entry. A DM channel or DM entry
records no server, so nothing says whose bot stored it: they are deleted (a DM memory lives a day
at most; the next DM turn stores a new one under its server).
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0002_consent_per_server"),
        ("servers", "0004_cache_stamp"),
    ]

    operations = [
        migrations.AddField(
            model_name="channel",
            name="discord_id",
            field=models.BigIntegerField(null=True),
        ),
        migrations.AddField(
            model_name="channel",
            name="owner",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="stm_owned_channels",
                to="servers.server",
            ),
        ),
        migrations.AddField(
            model_name="stmentry",
            name="owner",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="stm_owned_entries",
                to="servers.server",
            ),
        ),
        migrations.CreateModel(
            name="DiscordUserName",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=100)),
                (
                    "server",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="stm_user_names",
                        to="servers.server",
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="names",
                        to="memory.discorduser",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("user", "server"), name="one_stm_user_name_per_server")
                ],
            },
        ),
    ]
