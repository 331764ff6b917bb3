"""Every memory record belongs to one server (issue 35): the data step, between 0003 (new columns)
and 0005 (constraints), each its own transaction on PostgreSQL.

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

from django.db import migrations, models


def assign_owners(apps, schema_editor):
    Channel = apps.get_model("memory", "Channel")
    StmEntry = apps.get_model("memory", "StmEntry")
    DiscordUser = apps.get_model("memory", "DiscordUser")
    DiscordUserName = apps.get_model("memory", "DiscordUserName")
    StmEntry.objects.filter(server__isnull=True).delete()
    StmEntry.objects.update(owner_id=models.F("server_id"))
    Channel.objects.filter(server__isnull=True).delete()
    Channel.objects.update(owner_id=models.F("server_id"), discord_id=models.F("id"))
    first_server: dict[int, int] = {}
    for user_id, server_id in StmEntry.objects.order_by("-id").values_list("user_id", "server_id").iterator():
        first_server[user_id] = server_id
    names = []
    for user_id, name in DiscordUser.objects.exclude(name="").values_list("id", "name").iterator():
        if user_id in first_server:
            names.append(DiscordUserName(user_id=user_id, server_id=first_server[user_id], name=name))
    DiscordUserName.objects.bulk_create(names, batch_size=1000)


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0003_per_server_namespaces"),
    ]

    operations = [
        migrations.RunPython(assign_owners, migrations.RunPython.noop),
    ]
