from django.urls import path

from . import api, views

app_name = "lorebooks"

_book = "servers/<int:server_id>/lorebooks/<int:lorebook_id>/"
urlpatterns = [
    path("servers/<int:server_id>/lorebooks/", views.lorebook_list, name="list"),
    path("servers/<int:server_id>/lorebooks/upload/", views.lorebook_upload, name="upload"),
    path("servers/<int:server_id>/lorebooks/settings/", views.settings_update, name="settings"),
    path(_book, views.lorebook_detail, name="detail"),
    path(_book + "activate/", views.lorebook_activate, name="activate"),
    path(_book + "deactivate/", views.lorebook_deactivate, name="deactivate"),
    path(_book + "delete/", views.lorebook_delete, name="delete"),
    path(_book + "download/", views.lorebook_download, name="download"),
    path(_book + "entries/bulk/", views.entries_bulk, name="entries-bulk"),
    path(_book + "entries/<int:entry_id>/toggle/", views.entry_toggle, name="entry-toggle"),
    path("api/v1/servers/<int:server_id>/lorebooks", api.lorebooks_collection, name="api-list"),
]
