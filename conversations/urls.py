from django.urls import path

from . import views
from .channels import api as channel_api
from .channels import views as channel_views

_C = "servers/<int:server_id>/conversations/<int:conversation_id>/"
_M = _C + "messages/<int:message_id>/"

_CH = "api/v1/servers/<int:server_id>/channels/<int:channel_id>/"
_CM = _CH + "messages/<int:discord_message_id>"

app_name = "conversations"
urlpatterns: list = [
    path("servers/<int:server_id>/conversations/", views.conversation_list, name="conversations"),
    path(
        "servers/<int:server_id>/conversations/import/", views.conversation_import, name="conversation-import"
    ),
    path(_C, views.conversation_detail, name="conversation"),
    path(_C + "rename/", views.conversation_rename, name="conversation-rename"),
    path(_C + "delete/", views.conversation_delete, name="conversation-delete"),
    path(_C + "messages/", views.message_add, name="message-add"),
    path(_M + "edit/", views.message_edit, name="message-edit"),
    path(_M + "continue/", views.message_continue, name="message-continue"),
    path(_M + "delete/", views.message_delete, name="message-delete"),
    path(_M + "swipes/", views.swipe_add, name="swipe-add"),
    path(_M + "swipes/<int:swipe_id>/select/", views.swipe_select, name="swipe-select"),
    path(_M + "swipes/<int:swipe_id>/delete/", views.swipe_delete, name="swipe-delete"),
    path(_M + "ops/", views.ops_save, name="ops-save"),
    path("servers/<int:server_id>/channels/", channel_views.channel_list, name="channels"),
    path("servers/<int:server_id>/channels/rules/", channel_views.channel_rules, name="channel-rules"),
    path(
        "servers/<int:server_id>/channels/forget-member/", channel_views.member_forget, name="member-forget"
    ),
    path("servers/<int:server_id>/channels/<int:channel_id>/", channel_views.channel_detail, name="channel"),
    path(
        "servers/<int:server_id>/channels/<int:channel_id>/forget/",
        channel_views.channel_forget,
        name="channel-forget",
    ),
    path(_CH + "messages", channel_api.messages, name="api-channel-messages"),
    path(_CM, channel_api.message, name="api-channel-message"),
    path(_CM + "/swipes", channel_api.swipes, name="api-channel-swipes"),
    path(_CM + "/swipes/current", channel_api.swipe_current, name="api-channel-swipe-current"),
    path(_CM + "/swipes/<int:swipe_index>", channel_api.swipe, name="api-channel-swipe"),
    path(_CH + "conversation", channel_api.conversation, name="api-channel-conversation"),
    path(
        "api/v1/servers/<int:server_id>/users/<int:user_id>/messages",
        channel_api.member_messages,
        name="api-member-messages",
    ),
]
