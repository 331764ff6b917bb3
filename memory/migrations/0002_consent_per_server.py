"""Consent per (user, server) replaces the one cross-server flag per user.

Today's opt-ins are kept as consent for the servers that relayed them, where the audit log knows
them: for a user whose flag is on, each server whose latest `stm.opt_in`/`stm.opt_out` event for
that user is an opt-in gets a consent row. A flag with no server on record (set from the admin, or
by the CLI without a server) gives no consent: the user opts in again through a server's bot.
"""

import django.db.models.deletion
from django.db import migrations, models


def keep_known_opt_ins(apps, schema_editor):
    DiscordUser = apps.get_model("memory", "DiscordUser")
    StmConsent = apps.get_model("memory", "StmConsent")
    AuditEvent = apps.get_model("servers", "AuditEvent")
    opted_in = {
        str(pk) for pk in DiscordUser.objects.filter(cross_server_opt_in=True).values_list("pk", flat=True)
    }
    if not opted_in:
        return
    latest: dict[tuple[str, int], str] = {}
    events = (
        AuditEvent.objects.filter(action__in=("stm.opt_in", "stm.opt_out"), server__isnull=False)
        .order_by("created_at", "id")
        .values_list("target_id", "server_id", "action")
    )
    for user_id, server_id, action in events.iterator():
        if user_id in opted_in:
            latest[(user_id, server_id)] = action
    StmConsent.objects.bulk_create(
        [
            StmConsent(user_id=int(user_id), server_id=server_id)
            for (user_id, server_id), action in latest.items()
            if action == "stm.opt_in"
        ],
        ignore_conflicts=True,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0001_initial"),
        ("servers", "0002_tokenizer"),
    ]

    operations = [
        migrations.CreateModel(
            name="StmConsent",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "server",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="stm_consents",
                        to="servers.server",
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="stm_consents",
                        to="memory.discorduser",
                    ),
                ),
            ],
            options={
                "verbose_name": "cross-server memory consent",
                "ordering": ["user_id", "server_id"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("user", "server"), name="one_stm_consent_per_user_and_server"
                    )
                ],
            },
        ),
        migrations.RunPython(keep_known_opt_ins, migrations.RunPython.noop),
        migrations.RemoveField(model_name="discorduser", name="cross_server_opt_in"),
    ]
