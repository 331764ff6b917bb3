from django.urls import path

from . import api, views, views_sampling

app_name = "presets"

_preset = "servers/<int:server_id>/presets/<int:preset_id>/"
urlpatterns = [
    path("help/", views.help_page, name="help"),
    path("servers/<int:server_id>/presets/", views.preset_list, name="list"),
    path("servers/<int:server_id>/presets/upload/", views.preset_upload, name="upload"),
    path("servers/<int:server_id>/sampling/", views_sampling.sampling, name="sampling"),
    path(_preset, views.preset_detail, name="detail"),
    path(_preset + "activate/", views.preset_activate, name="activate"),
    path(_preset + "deactivate/", views.preset_deactivate, name="deactivate"),
    path(_preset + "rename/", views.preset_rename, name="rename"),
    path(_preset + "delete/", views.preset_delete, name="delete"),
    path(_preset + "style/", views.preset_style, name="style"),
    path(_preset + "download/", views.preset_download, name="download"),
    path(_preset + "nodes/bulk/", views.nodes_bulk, name="nodes-bulk"),
    path(_preset + "nodes/<int:node_id>/toggle/", views.node_toggle, name="node-toggle"),
    path("api/v1/servers/<int:server_id>/presets", api.presets_collection, name="api-list"),
    path("api/v1/servers/<int:server_id>/presets/active", api.active_preset, name="api-active"),
]
