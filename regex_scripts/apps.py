from django.apps import AppConfig


class RegexScriptsConfig(AppConfig):
    name = "regex_scripts"
    verbose_name = "Regex scripts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported here: settings and the engine are read once the app registry is ready.
        from django.conf import settings

        from engine.regex import set_default_budget_ms
        from servers.status import HOME_COUNTS, Count

        from .models import ServerScript

        # The engine reads no settings: every request's regex budget starts from this (issue 25).
        set_default_budget_ms(settings.REGEX_REQUEST_BUDGET_MS)
        HOME_COUNTS.add(Count("Server regex scripts", ServerScript, "regex_scripts:list"), order=30)
