"""The directory keeps its members; its channels are `Channel` rows marked `listed` since 0014."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("servers", "0014_channel_data"),
    ]

    operations = [
        migrations.RemoveField(model_name="serverdirectory", name="channels"),
    ]
