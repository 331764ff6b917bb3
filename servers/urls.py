from django.contrib.auth import views as auth_views
from django.urls import path

from . import channel_tools, views

app_name = "servers"
urlpatterns = [
    path("", views.home, name="home"),
    path("servers/<int:server_id>/", views.server_home, name="server"),
    path("servers/<int:server_id>/tokenizer/", views.tokenizer, name="tokenizer"),
    path("servers/<int:server_id>/tokens/", views.tokens, name="tokens"),
    path("servers/<int:server_id>/tokens/<int:token_id>/revoke/", views.token_revoke, name="token-revoke"),
    path("servers/<int:server_id>/audit/", views.audit, name="audit"),
    path(
        "api/v1/servers/<int:server_id>/channels/<int:channel_id>/tools/<str:tool_name>",
        channel_tools.channel_tool,
        name="api-channel-tool",
    ),
]

# Sign-in lives at the top level under its conventional names.
auth_patterns = [
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]
