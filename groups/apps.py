from django.apps import AppConfig


class GroupsConfig(AppConfig):
    name = "groups"
    verbose_name = "Group chats"

    def ready(self) -> None:
        # Imported here: models and the lower apps' hooks load once the app registry is ready.
        from memory.selectors import CHANNEL_NOTES

        from . import selectors

        # The members' notes reach their prompts, so the memory review shows them (docs/groups.md).
        CHANNEL_NOTES.add(selectors.notes_for, order=10)
