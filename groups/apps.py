from django.apps import AppConfig


class GroupsConfig(AppConfig):
    name = "groups"
    verbose_name = "Group chats"

    def ready(self) -> None:
        # Imported here: models and the lower apps' hooks load once the app registry is ready.
        from characters.selectors import CARD_USES
        from memory.selectors import CHANNEL_NOTES
        from servers.channel_tools import CHANNEL_TOOLS
        from servers.demo import DEMO_DATA

        from . import demo, selectors, workspace_tools

        # The members' notes reach their prompts, so the memory review shows them (docs/groups.md).
        CHANNEL_NOTES.add(selectors.notes_for, order=10)
        # Deleting a card names the groups it leaves (docs/groups.md).
        CARD_USES.add(selectors.card_use_words, order=10)
        # The Author's Note and dice tools on the channel tool route (docs/groups.md#a-shared-workspace).
        for order, tool in enumerate(workspace_tools.TOOLS):
            CHANNEL_TOOLS.add(tool, order=20 + order)
        DEMO_DATA.add(demo.populate, order=25)  # after the cards (15) and the memory channels (20)
