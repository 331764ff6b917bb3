from django.apps import AppConfig


class RegexScriptsConfig(AppConfig):
    name = "regex_scripts"
    verbose_name = "Regex scripts"
    default_auto_field = "django.db.models.BigAutoField"
