from django.apps import AppConfig


class AssemblyConfig(AppConfig):
    name = "assembly"

    def ready(self) -> None:
        # Imported here: models and the lower apps' hooks load once the app registry is ready.
        from servers.demo import DEMO_DATA
        from servers.status import HOME_COUNTS, Count

        from . import demo
        from .models import SampleBucket

        HOME_COUNTS.add(Count("Saved samples", SampleBucket, "assembly:preview"), order=40)
        DEMO_DATA.add(demo.populate, order=30)
