from django.apps import AppConfig


class GroupsConfig(AppConfig):
    name = "groups"
    verbose_name = "Group chats"

    def ready(self) -> None:
        # Imported here: models and the lower apps' hooks load once the app registry is ready.
        from characters.uses import CARD_USES
        from memory.selectors import CHANNEL_NOTES
        from servers.demo import DEMO_DATA

        from . import demo, selectors

        # The members' notes reach their prompts, so the memory review shows them (docs/groups.md).
        CHANNEL_NOTES.add(selectors.notes_for, order=10)
        # Deleting a card asks first and names the groups it leaves (docs/presets.md#asking-first).
        CARD_USES.add(selectors.groups_with_card, order=10)
        DEMO_DATA.add(demo.populate, order=25)  # after the cards (15) and the memory channels (20)
