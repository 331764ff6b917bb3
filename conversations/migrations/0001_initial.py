# The sample-conversation models moved here from `assembly`; their tables keep their names, so no
# data moves: this migration only teaches Django's state where the models now live.

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('assembly', '0002_sample_buckets'),
        ('servers', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
            migrations.CreateModel(
                name='SampleConversation',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('name', models.CharField(max_length=100)),
                    ('created_at', models.DateTimeField(auto_now_add=True)),
                    ('updated_at', models.DateTimeField(auto_now=True)),
                    ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ('server', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='sample_conversations', to='servers.server')),
                ],
                options={
                    'ordering': ['name', 'id'],
                    'db_table': 'assembly_sampleconversation',
                },
            ),
            migrations.CreateModel(
                name='ConversationMessage',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('position', models.PositiveIntegerField(help_text='Order in the conversation; gaps are fine.')),
                    ('role', models.CharField(choices=[('user', 'User'), ('assistant', 'Assistant')], max_length=16)),
                    ('speaker', models.CharField(blank=True, max_length=100)),
                    ('timestamp', models.DateTimeField(default=django.utils.timezone.now)),
                    ('conversation', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='messages', to='conversations.sampleconversation')),
                ],
                options={
                    'db_table': 'assembly_conversationmessage',
                    'ordering': ['position', 'id'],
                },
            ),
            migrations.CreateModel(
                name='Swipe',
                fields=[
                    ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                    ('text', models.TextField(blank=True, help_text='The visible text: extracted write macros are removed.')),
                    ('ops', models.JSONField(blank=True, default=list, help_text='Recorded write ops, in order: [{"op", "key", "value"}].')),
                    ('is_current', models.BooleanField(default=False)),
                    ('created_at', models.DateTimeField(auto_now_add=True)),
                    ('message', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='swipes', to='conversations.conversationmessage')),
                ],
                options={
                    'db_table': 'assembly_swipe',
                    'ordering': ['id'],
                },
            ),
            migrations.AddConstraint(
                model_name='sampleconversation',
                constraint=models.UniqueConstraint(fields=('server', 'name'), name='one_sample_conversation_name_per_server'),
            ),
            migrations.AddConstraint(
                model_name='conversationmessage',
                constraint=models.UniqueConstraint(fields=('conversation', 'position'), name='one_message_per_conversation_position'),
            ),
            migrations.AddConstraint(
                model_name='swipe',
                constraint=models.UniqueConstraint(condition=models.Q(('is_current', True)), fields=('message',), name='one_current_swipe_per_message'),
            ),
            ],
            database_operations=[],
        ),
    ]
