# The sample-conversation models now belong to the `conversations` app (same tables): drop them from
# this app's state only.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('assembly', '0002_sample_buckets'),
        ('conversations', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name='Swipe'),
                migrations.DeleteModel(name='ConversationMessage'),
                migrations.DeleteModel(name='SampleConversation'),
            ],
            database_operations=[],
        ),
    ]
