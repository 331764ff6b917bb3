from django.urls import path

from . import api, views

app_name = "regex_scripts"

_script = "servers/<int:server_id>/regex/<int:script_id>/"
urlpatterns = [
    path("servers/<int:server_id>/regex/", views.script_list, name="list"),
    path("servers/<int:server_id>/regex/upload/", views.script_upload, name="upload"),
    path("servers/<int:server_id>/regex/add/", views.script_add, name="add"),
    path("servers/<int:server_id>/regex/tester/", views.tester, name="tester"),
    path(_script + "edit/", views.script_edit, name="edit"),
    path(_script + "toggle/", views.script_toggle, name="toggle"),
    path(_script + "move/", views.script_move, name="move"),
    path(_script + "delete/", views.script_delete, name="delete"),
    path("servers/<int:server_id>/presets/<int:preset_id>/regex/", views.preset_scripts, name="preset"),
    path(
        "servers/<int:server_id>/presets/<int:preset_id>/regex/toggle/",
        views.preset_script_toggle,
        name="preset-toggle",
    ),
    path("api/v1/servers/<int:server_id>/regex/clean", api.clean_view, name="api-clean"),
]
