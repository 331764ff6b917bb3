from django.apps import AppConfig


class PresetsConfig(AppConfig):
    name = "presets"

    def ready(self) -> None:
        # Imported here: models and the lower apps' hooks load once the app registry is ready.
        from servers.demo import DEMO_DATA
        from servers.status import ACTIVE, HOME_COUNTS, Active, Count

        from . import demo, selectors
        from .models import Preset

        HOME_COUNTS.add(Count("Presets", Preset, "presets:list"), order=10)
        ACTIVE.add(Active(find=selectors.active_preset_name, url_name="presets:detail"), order=10)
        DEMO_DATA.add(demo.populate, order=10)
