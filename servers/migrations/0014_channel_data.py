"""Channels stored once (the data step between 0013 and memory 0006).

- Every memory channel row becomes a servers channel row with the same id, so memory entries,
  threads and audit events that name a channel by id still name it. Its name, parent, DM-ness and
  private flag come along unchanged.
- Every channel of a pushed directory marks its row `listed`. A channel the directory names but no
  row holds yet gets a row from the directory (name, parent, private). Where a row exists, its own
  flag wins: an admin's later privacy choice was written there, and the push had been carried onto
  it. A directory channel the server stored as a DM stays the DM (the push skipped it before too).

Backwards, memory 0006 puts the rows back in memory and this step the listed ones back into the
directory's list.
"""

from django.db import migrations


def _continue_ids(schema_editor, table):
    """PostgreSQL: rows inserted with their old ids; new rows must continue after them."""
    if schema_editor.connection.vendor != "postgresql":
        return  # SQLite's AUTOINCREMENT continues after the largest id by itself
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
            f"GREATEST((SELECT COALESCE(MAX(id), 0) FROM {table}), 1))"
        )


def channels_to_servers(apps, schema_editor):
    Old = apps.get_model("memory", "Channel")
    Channel = apps.get_model("servers", "Channel")
    ServerDirectory = apps.get_model("servers", "ServerDirectory")
    fields = ("id", "discord_id", "owner_id", "server_id", "parent_id", "name", "is_private")
    rows = [Channel(**dict(zip(fields, values))) for values in Old.objects.order_by("id").values_list(*fields)]
    Channel.objects.bulk_create(rows, batch_size=1000)
    _continue_ids(schema_editor, Channel._meta.db_table)
    for directory in ServerDirectory.objects.order_by("server_id"):
        owner = directory.server_id
        for entry in directory.channels or []:
            row = Channel.objects.filter(owner_id=owner, discord_id=entry["id"]).first()
            if row is None:
                row = Channel.objects.create(
                    owner_id=owner,
                    server_id=owner,
                    discord_id=entry["id"],
                    name=str(entry.get("name") or "")[:100],
                    is_private=bool(entry.get("private")),
                )
            if row.server_id is None:
                continue
            if not row.name:
                row.name = str(entry.get("name") or "")[:100]
            parent_id = entry.get("parent")
            if row.parent_id is None and parent_id is not None and parent_id != entry["id"]:
                parent, _ = Channel.objects.get_or_create(
                    owner_id=owner, discord_id=parent_id, defaults={"server_id": owner}
                )
                if parent.server_id is not None:
                    row.parent_id = parent.pk
            row.listed = True
            row.save()


def listed_to_directory(apps, schema_editor):
    """Backwards: the listed channels go back into the directory's list (memory 0006's reverse has
    put the rows back in memory)."""
    Channel = apps.get_model("servers", "Channel")
    ServerDirectory = apps.get_model("servers", "ServerDirectory")
    for directory in ServerDirectory.objects.all():
        listed = Channel.objects.filter(owner_id=directory.server_id, listed=True).select_related("parent")
        directory.channels = [
            {
                "id": row.discord_id,
                "name": row.name,
                "parent": row.parent.discord_id if row.parent else None,
                "private": row.is_private,
            }
            for row in listed.order_by("id")
        ]
        directory.save(update_fields=["channels"])


class Migration(migrations.Migration):
    dependencies = [
        ("servers", "0013_channel"),
        ("memory", "0005_per_server_namespaces_constraints"),
    ]

    operations = [
        migrations.RunPython(channels_to_servers, listed_to_directory),
    ]
