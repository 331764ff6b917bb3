from django.contrib import admin
from django.urls import include, path

from servers.urls import auth_patterns

urlpatterns = [
    path("admin/", admin.site.urls),
    *auth_patterns,
    path("", include("servers.urls")),
    path("", include("presets.urls")),
    path("", include("lorebooks.urls")),
    path("", include("memory.urls")),
    path("", include("conversations.urls")),
    path("", include("characters.urls")),
    path("", include("assembly.urls")),
    path("", include("regex_scripts.urls")),
]
