from django.urls import path

from . import api, views

_G = "api/v1/servers/<int:server_id>/groups/"

app_name = "groups"
urlpatterns = [
    path("servers/<int:server_id>/groups/", views.group_list, name="list"),
    path("servers/<int:server_id>/groups/new/", views.group_new, name="new"),
    path("servers/<int:server_id>/groups/channels/", views.channel_set, name="channel-set"),
    path("servers/<int:server_id>/groups/notes/", views.member_note_save, name="note-save"),
    path("servers/<int:server_id>/groups/authors-notes/", views.authors_note_save, name="authors-note-save"),
    path("servers/<int:server_id>/groups/<int:group_id>/", views.group_edit, name="edit"),
    path("servers/<int:server_id>/groups/<int:group_id>/delete/", views.group_delete, name="delete"),
    path("api/v1/servers/<int:server_id>/groups", api.group_list, name="api-list"),
    path(_G + "<path:group_name>/next", api.group_next, name="api-next"),
    path(_G + "<path:group_name>/notes", api.member_note, name="api-notes"),
    path(_G + "<path:group_name>", api.group_detail, name="api-detail"),
    path(
        "api/v1/servers/<int:server_id>/channels/<int:channel_id>/group",
        api.channel_group,
        name="api-channel",
    ),
]
