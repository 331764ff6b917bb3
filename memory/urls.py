from django.urls import path

from . import api, views

app_name = "memory"
urlpatterns = [
    path("servers/<int:server_id>/memory/", views.review, name="review"),
    path("servers/<int:server_id>/memory/bypass/", views.privacy_bypass, name="bypass"),
    path("servers/<int:server_id>/memory/receive/", views.receive_other_servers, name="receive"),
    path(
        "servers/<int:server_id>/memory/channels/<int:channel_id>/private/",
        views.channel_private,
        name="channel-private",
    ),
    path("api/v1/servers/<int:server_id>/stm/turns", api.store_turn, name="api-turns"),
    path("api/v1/servers/<int:server_id>/stm/summary", api.update_summary, name="api-summary"),
    path("api/v1/servers/<int:server_id>/stm/entries", api.list_entries, name="api-entries"),
    path("api/v1/servers/<int:server_id>/directory", api.directory, name="api-directory"),
    path("api/v1/servers/<int:server_id>/stm/users/<int:user_id>/opt-in", api.user_opt_in, name="api-opt-in"),
]
