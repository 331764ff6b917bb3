from django.apps import AppConfig


class CharactersConfig(AppConfig):
    name = "characters"
    verbose_name = "Character cards"

    def ready(self) -> None:
        # Imported here: models and the lower apps' hooks load once the app registry is ready.
        from servers.demo import DEMO_DATA
        from servers.status import HOME_COUNTS, Count

        from . import demo
        from .models import Card

        HOME_COUNTS.add(Count("Character cards", Card, "characters:list"), order=20)
        DEMO_DATA.add(demo.populate, order=15)
