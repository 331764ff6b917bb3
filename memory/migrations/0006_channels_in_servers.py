"""Memory entries point at servers' channel rows (same ids, copied by servers 0014), and memory's
own channel table goes: a channel is stored once. Backwards, the rows come back (same ids) before
the entries point at them again. Not atomic: on PostgreSQL the copy commits before a table changes."""

import django.db.models.deletion
from django.db import migrations, models


def rows_back_to_memory(apps, schema_editor):
    Old = apps.get_model("memory", "Channel")
    Channel = apps.get_model("servers", "Channel")
    fields = ("id", "discord_id", "owner_id", "server_id", "parent_id", "name", "is_private")
    rows = [Old(**dict(zip(fields, values))) for values in Channel.objects.order_by("id").values_list(*fields)]
    Old.objects.bulk_create(rows, batch_size=1000)
    if schema_editor.connection.vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(
                "SELECT setval(pg_get_serial_sequence('memory_channel', 'id'), "
                "GREATEST((SELECT COALESCE(MAX(id), 0) FROM memory_channel), 1))"
            )


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("memory", "0005_per_server_namespaces_constraints"),
        ("servers", "0014_channel_data"),
    ]

    operations = [
        migrations.AlterField(
            model_name="stmentry",
            name="channel",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="stm_entries",
                to="servers.channel",
            ),
        ),
        migrations.RunPython(migrations.RunPython.noop, rows_back_to_memory),
        migrations.DeleteModel(name="Channel"),
    ]
