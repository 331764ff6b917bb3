from django.apps import AppConfig


class PresetsConfig(AppConfig):
    name = "presets"
