from django.urls import path

from . import api

_G = "api/v1/servers/<int:server_id>/groups/"

app_name = "groups"
urlpatterns = [
    path("api/v1/servers/<int:server_id>/groups", api.group_list, name="api-list"),
    path(_G + "<path:name>/next", api.group_next, name="api-next"),
    path(_G + "<path:name>/notes", api.member_note, name="api-notes"),
    path(_G + "<path:name>", api.group_detail, name="api-detail"),
    path(
        "api/v1/servers/<int:server_id>/channels/<int:channel>/group", api.channel_group, name="api-channel"
    ),
]
