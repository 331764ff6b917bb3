from django.apps import AppConfig


class ServersConfig(AppConfig):
    name = "servers"

    def ready(self) -> None:
        from . import sessions  # the models are loaded only once the apps are ready

        sessions.connect()
