"""The last step of 0003–0004 (issue 35): the new columns become required, channels get their own
row ids (continuing after the old ones, which were Discord ids), one row per (owner, Discord id).
Its own migration, so PostgreSQL alters the tables after 0003's data is committed."""

import django.db.models.deletion
from django.db import migrations, models


def continue_ids_after_the_old_ones(apps, schema_editor):
    """PostgreSQL: new channel rows must not meet an old id (old ids are Discord ids)."""
    if schema_editor.connection.vendor != "postgresql":
        return  # SQLite's AUTOINCREMENT starts after the largest id by itself
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT setval(pg_get_serial_sequence('memory_channel', 'id'), "
            "GREATEST((SELECT COALESCE(MAX(id), 0) FROM memory_channel), 1))"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0004_per_server_namespaces_data"),
    ]

    operations = [
        migrations.RemoveField(model_name="discorduser", name="name"),
        migrations.AlterField(
            model_name="channel",
            name="discord_id",
            field=models.BigIntegerField(),
        ),
        migrations.AlterField(
            model_name="channel",
            name="owner",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="stm_owned_channels",
                to="servers.server",
            ),
        ),
        migrations.AlterField(
            model_name="stmentry",
            name="owner",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="stm_owned_entries",
                to="servers.server",
            ),
        ),
        migrations.AlterField(
            model_name="channel",
            name="id",
            field=models.BigAutoField(primary_key=True, serialize=False),
        ),
        migrations.RunPython(continue_ids_after_the_old_ones, migrations.RunPython.noop),
        migrations.AlterModelOptions(
            name="channel", options={"ordering": ["owner_id", "name", "discord_id"]}
        ),
        migrations.AddConstraint(
            model_name="channel",
            constraint=models.UniqueConstraint(
                fields=("owner", "discord_id"), name="one_stm_channel_per_owner_and_id"
            ),
        ),
        migrations.AddIndex(
            model_name="stmentry",
            index=models.Index(fields=["owner", "lineage"], name="stm_owner_lineage"),
        ),
    ]
