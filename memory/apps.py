from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"

    def ready(self) -> None:
        # Imported here: models and the lower apps' hooks load once the app registry is ready.
        from servers.demo import DEMO_DATA
        from servers.models import Channel
        from servers.status import HOME_COUNTS, Count

        from . import demo
        from .models import StmEntry

        HOME_COUNTS.add(Count("Channels with memory", Channel, "memory:review"), order=60)
        HOME_COUNTS.add(Count("Stored memories", StmEntry, "memory:review"), order=70)
        DEMO_DATA.add(demo.populate, order=20)
