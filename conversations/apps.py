from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    name = "conversations"
    verbose_name = "Sample conversations"

    def ready(self) -> None:
        # Imported here: models and the lower apps' hooks load once the app registry is ready.
        from servers.channel_tools import CHANNEL_TOOLS
        from servers.status import HOME_COUNTS, Count

        from .channels import tools
        from .models import SampleConversation

        HOME_COUNTS.add(
            Count("Sample conversations", SampleConversation, "conversations:conversations"), order=50
        )
        # Recall on the channel tool route (docs/channels.md#recall).
        for order, tool in enumerate(tools.TOOLS):
            CHANNEL_TOOLS.add(tool, order=10 + order)
