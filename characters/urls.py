from django.urls import path

from . import api, avatars, views

_C = "servers/<int:server_id>/cards/<int:card_id>/"

app_name = "characters"
urlpatterns = [
    path("servers/<int:server_id>/cards/", views.card_list, name="list"),
    path("servers/<int:server_id>/cards/upload/", views.card_upload, name="upload"),
    path(_C, views.card_detail, name="detail"),
    path(_C + "activate/", views.card_activate, name="activate"),
    path(_C + "deactivate/", views.card_deactivate, name="deactivate"),
    path(_C + "delete/", views.card_delete, name="delete"),
    path(_C + "avatar.png", views.card_avatar, name="avatar"),
    path(_C + "download.json", views.card_download, {"kind": "json"}, name="download-json"),
    path(_C + "download.png", views.card_download, {"kind": "png"}, name="download-png"),
    path(
        "avatars/<int:server_id>/<int:card_id>/<str:signature>.png",
        avatars.public_avatar,
        name="public-avatar",
    ),
    path("api/v1/servers/<int:server_id>/card", api.active_card, name="api-active-card"),
]
