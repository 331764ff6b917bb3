from django.apps import AppConfig


class LorebooksConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "lorebooks"
    verbose_name = "Lorebooks (World Info)"
