from django.urls import path

from . import api, views
from .channels import views as channel_views
from .editor import views as editor_views
from .sampling import views as sampling_views
from .versions import views as version_views

app_name = "presets"

_preset = "servers/<int:server_id>/presets/<int:preset_id>/"
urlpatterns = [
    path("help/", views.help_page, name="help"),
    path("servers/<int:server_id>/presets/", views.preset_list, name="list"),
    path("servers/<int:server_id>/presets/upload/", views.preset_upload, name="upload"),
    path("servers/<int:server_id>/sampling/", sampling_views.sampling, name="sampling"),
    path(_preset, views.preset_detail, name="detail"),
    path(_preset + "activate/", views.preset_activate, name="activate"),
    path(_preset + "deactivate/", views.preset_deactivate, name="deactivate"),
    path(_preset + "rename/", views.preset_rename, name="rename"),
    path(_preset + "delete/", views.preset_delete, name="delete"),
    path(_preset + "style/", views.preset_style, name="style"),
    path(_preset + "download/", views.preset_download, name="download"),
    path(_preset + "nodes/bulk/", views.nodes_bulk, name="nodes-bulk"),
    path(_preset + "nodes/<int:node_id>/toggle/", views.node_toggle, name="node-toggle"),
    # The editor (presets/editor/), versions (presets/versions/) and channel presets (presets/channels/).
    path(_preset + "nodes/add/", editor_views.node_add, name="node-add"),
    path(_preset + "nodes/reorder/", editor_views.nodes_reorder, name="nodes-reorder"),
    path(_preset + "nodes/<int:node_id>/", editor_views.node_view, name="node"),
    path(_preset + "nodes/<int:node_id>/edit/", editor_views.node_edit, name="node-edit"),
    path(_preset + "nodes/<int:node_id>/duplicate/", editor_views.node_duplicate, name="node-duplicate"),
    path(_preset + "nodes/<int:node_id>/delete/", editor_views.node_delete, name="node-delete"),
    path(_preset + "nodes/<int:node_id>/move/", editor_views.node_move, name="node-move"),
    path(_preset + "versions/", version_views.version_list, name="versions"),
    path(_preset + "versions/diff/", version_views.version_diff, name="version-diff"),
    path(_preset + "versions/download/", version_views.version_download, name="version-download"),
    path(_preset + "rollback/", version_views.preset_rollback, name="rollback"),
    path("servers/<int:server_id>/presets/channels/", channel_views.channel_set, name="channel-set"),
    path("api/v1/servers/<int:server_id>/presets", api.presets_collection, name="api-list"),
    path("api/v1/servers/<int:server_id>/presets/active", api.active_preset, name="api-active"),
]
