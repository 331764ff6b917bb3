from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    name = "conversations"
    verbose_name = "Sample conversations"

    def ready(self) -> None:
        # Imported here: models and the lower apps' hooks load once the app registry is ready.
        from servers.status import HOME_COUNTS, Count

        from .models import SampleConversation

        HOME_COUNTS.add(
            Count("Sample conversations", SampleConversation, "conversations:conversations"), order=50
        )
