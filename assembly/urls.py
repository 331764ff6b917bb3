from django.urls import path

from . import api, views_preview

app_name = "assembly"
urlpatterns = [
    path("servers/<int:server_id>/preview/", views_preview.preview_page, name="preview"),
    path("servers/<int:server_id>/preview/render/", views_preview.preview_render, name="preview-render"),
    path("servers/<int:server_id>/preview/samples/save/", views_preview.sample_save, name="sample-save"),
    path(
        "servers/<int:server_id>/preview/samples/delete/", views_preview.sample_delete, name="sample-delete"
    ),
    path("api/v1/servers/<int:server_id>/assemble", api.assemble_view, name="api-assemble"),
]
