"""The thread parent lives on servers' channel rows since 0004."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("conversations", "0004_thread_parents_to_channels"),
    ]

    operations = [
        migrations.RemoveField(model_name="channelconversation", name="parent_id"),
    ]
