"""A populated server for the security walk: one object of every kind the URLs name, per server.

`World` holds the ids a URL pattern's kwargs need. Every name and text of Harbor Hall's objects
carries CANARY, so a response that shows any of them to a Lantern request is caught by a substring.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from assembly import services as bucket_services
from characters import services as card_services
from characters.models import Card as CardRow
from conversations import services as conversation_services
from conversations.channels import services as channel_services
from conversations.models import (
    ChannelConversation,
    ChannelMessage,
    ChannelSettings,
    ConversationMessage,
    SampleConversation,
    Swipe,
)
from engine.cards import Card, card_png
from engine.regex import parse_scripts
from groups import services as group_services
from groups.models import Group as GroupRow
from groups.models import GroupMember, MemberNote
from lorebooks import services as lorebook_services
from memory import services as memory_services
from presets import cache as preset_cache
from presets import services as preset_services
from presets.models import Preset, PresetNode
from regex_scripts import services as regex_services
from regex_scripts.models import ServerScript
from servers import services as server_services
from servers.models import ApiToken, Server
from servers.services import api_token_create, api_token_revoke

CANARY = "HARBORCANARY"
DEFAULT_BUCKETS = Path(__file__).resolve().parents[2] / "assembly" / "default_buckets.json"


def preset_bytes(label: str) -> bytes:
    prompts: list[dict[str, Any]] = [
        {"identifier": "main", "name": f"{label} main", "role": "system", "content": f"{label} says hi."},
        {"identifier": "extra", "name": f"{label} extra", "role": "system", "content": f"{label} extra."},
        {"identifier": "chatHistory", "name": "Chat History", "marker": True},
    ]
    order = [{"identifier": p["identifier"], "enabled": True} for p in prompts]
    return json.dumps(
        {
            "prompts": prompts,
            "prompt_order": [{"character_id": 100001, "order": order}],
            "extensions": {"regex_scripts": [{"id": "walk-script", "findRegex": "/x/g", "placement": [2]}]},
        }
    ).encode()


@dataclass(frozen=True)
class World:
    """Ids of one server's objects, by the URL kwarg that names them."""

    server: Server
    preset_id: int
    node_id: int
    token_id: int
    revoked_token: str
    live_token: str
    channel_id: int
    conversation_id: int
    message_id: int
    swipe_id: int
    bucket_name: str
    discord_user_id: int
    card_id: int
    script_id: int = 0
    lorebook_id: int = 0
    entry_id: int = 0
    group_name: str = ""
    group_id: int = 0
    discord_message_id: int = 0
    swipe_index: int = 0
    card_name: str = ""

    def kwargs(self) -> dict[str, int | str]:
        return {
            "group_name": self.group_name,
            "group_id": self.group_id,
            "card_id": self.card_id,
            "server_id": self.server.pk,
            "preset_id": self.preset_id,
            "node_id": self.node_id,
            "token_id": self.token_id,
            "channel_id": self.channel_id,
            "conversation_id": self.conversation_id,
            "message_id": self.message_id,
            "swipe_id": self.swipe_id,
            "user_id": self.discord_user_id,
            "script_id": self.script_id,
            "lorebook_id": self.lorebook_id,
            "entry_id": self.entry_id,
            "discord_message_id": self.discord_message_id,
            "swipe_index": self.swipe_index,
            "tool_name": "roll_dice",
        }


def card_bytes(name: str) -> bytes:
    """A small V2 card as a PNG (so the avatar page has an image to serve)."""
    return card_png(Card(spec="chara_card_v2", name=name, description=f"{name}, a <b>bold</b> keeper."))


def lorebook_bytes(label: str) -> bytes:
    return json.dumps(
        {
            "entries": {
                "0": {"key": [f"{label} key"], "comment": f"{label} lore", "content": f"{label} lore text."}
            }
        }
    ).encode()


def build_world(server: Server, admin: Any, label: str, base: int) -> World:
    """One of everything for `server`; `base` keeps Discord snowflakes of two worlds apart."""
    preset = preset_services.preset_import(
        server=server, raw=preset_bytes(label), filename=f"{label} preset.json", by=admin
    ).preset
    node = PresetNode.objects.filter(preset=preset, identifier="extra").get()
    token, plain = api_token_create(server=server, name=f"{label} bot", by=admin)
    revoked, revoked_plain = api_token_create(server=server, name=f"{label} old bot", by=admin)
    api_token_revoke(token=revoked, by=admin)
    channel = server_services.channel_ensure(channel_id=base + 1, owner_id=server.pk, name=f"{label}-chan")
    memory_services.stm_store_turn(
        server_id=server.pk,
        channel_id=channel.discord_id,
        user_id=base + 2,
        user_name=f"{label} user",
        messages=[{"role": "user", "name": f"{label} user", "content": f"{label} remembers"}],
        summary=f"{label} summary",
    )
    conversation = conversation_services.conversation_create(server=server, name=f"{label} chat", by=admin)
    message, _ = conversation_services.message_add(
        conversation=conversation, role="user", text=f"{{{{setvar::mood::{label}}}}}{label} hello", by=admin
    )
    swipe, _ = conversation_services.swipe_add(message=message, text=f"{label} again", by=admin)
    document = json.loads(DEFAULT_BUCKETS.read_text())
    bucket = bucket_services.sample_bucket_save(
        server=server, name=f"{label} sample", document=document, by=admin
    )
    card = card_services.card_import(
        server=server, raw=card_bytes(f"{label} card"), filename="card.png", by=admin
    )
    (script,), _ = regex_services.scripts_import(
        server=server,
        scripts=parse_scripts({"scriptName": f"{label} script", "findRegex": "/x/g", "placement": [2]}),
        by=admin,
    )
    lorebook = lorebook_services.lorebook_import(
        server=server, raw=lorebook_bytes(label), filename=f"{label} lore.json", by=admin
    ).lorebook
    group = group_services.group_save(server=server, name=f"{label} group", members=[card.row.name], by=admin)
    group_services.channel_group_set(server=server, channel_id=channel.pk, group=group, by=admin)
    channel_services.message_post(
        server_id=server.pk,
        channel_id=channel.discord_id,
        message_id=base + 3,
        role="assistant",
        content=label,
    )
    channel_services.swipe_add(
        server_id=server.pk, channel_id=channel.discord_id, message_id=base + 3, content=f"{label} again"
    )
    return World(
        group_name=group.name,
        group_id=group.pk,
        card_id=card.row.pk,
        card_name=card.row.name,
        script_id=script.pk,
        server=server,
        lorebook_id=lorebook.pk,
        entry_id=lorebook.entries.get().pk,
        preset_id=preset.pk,
        node_id=node.pk,
        token_id=token.pk,
        revoked_token=revoked_plain,
        live_token=plain,
        channel_id=channel.discord_id,
        conversation_id=conversation.pk,
        message_id=message.pk,
        swipe_id=swipe.pk,
        bucket_name=bucket.name,
        discord_user_id=base + 2,
        discord_message_id=base + 3,
        swipe_index=1,
    )


def snapshot(server: Server) -> dict[str, Any]:
    """Everything a request could change about a server's rows, as comparable plain data."""
    from assembly.bucket_models import SampleBucket
    from lorebooks.models import Lorebook, LorebookEntry, WorldInfoSettingsRow
    from memory.models import StmEntry
    from servers.models import Channel

    server.refresh_from_db()
    return {
        "server": (server.name, server.stm_privacy_bypass, server.stm_receive_other_servers),
        "presets": list(
            Preset.objects.filter(server=server).order_by("pk").values_list("pk", "name", "is_active")
        ),
        "nodes": list(
            PresetNode.objects.filter(preset__server=server).order_by("pk").values_list("pk", "enabled")
        ),
        "tokens": list(
            ApiToken.objects.filter(server=server).order_by("pk").values_list("pk", "name", "revoked_at")
        ),
        "channels": list(Channel.objects.filter(owner=server).order_by("pk").values_list("pk", "is_private")),
        "stm": list(
            StmEntry.objects.filter(owner=server).order_by("pk").values_list("pk", "summary", "messages")
        ),
        "buckets": list(SampleBucket.objects.filter(server=server).order_by("pk").values_list("pk", "name")),
        "conversations": list(
            SampleConversation.objects.filter(server=server).order_by("pk").values_list("pk", "name")
        ),
        "messages": list(
            ConversationMessage.objects.filter(conversation__server=server)
            .order_by("pk")
            .values_list("pk", "position")
        ),
        "regex_scripts": list(
            ServerScript.objects.filter(server=server)
            .order_by("pk")
            .values_list("pk", "position", "enabled", "data")
        ),
        "swipes": list(Swipe.objects.filter(message__conversation__server=server).order_by("pk").values()),
        "channel_settings": list(ChannelSettings.objects.filter(server=server).values()),
        "channel_conversations": list(
            ChannelConversation.objects.filter(server=server).order_by("pk").values_list("pk", "variables")
        ),
        "channel_messages": list(
            ChannelMessage.objects.filter(conversation__server=server)
            .order_by("pk")
            .values_list("pk", "swipes", "current", "conversation__variables")
        ),
        "cards": list(
            CardRow.objects.filter(server=server).order_by("pk").values_list("pk", "name", "is_active")
        ),
        "lorebooks": list(
            Lorebook.objects.filter(server=server).order_by("pk").values_list("pk", "name", "is_active")
        ),
        "entries": list(
            LorebookEntry.objects.filter(lorebook__server=server).order_by("pk").values_list("pk", "enabled")
        ),
        "world_info_settings": list(WorldInfoSettingsRow.objects.filter(server=server).values()),
        "groups": list(
            GroupRow.objects.filter(server=server).order_by("pk").values_list("pk", "name", "strategy")
        ),
        "group_members": list(
            GroupMember.objects.filter(group__server=server)
            .order_by("pk")
            .values_list("pk", "card_id", "muted")
        ),
        "group_notes": list(
            MemberNote.objects.filter(server=server).order_by("pk").values_list("pk", "text")
        ),
    }


@pytest.fixture
def lantern_world(lantern, alice) -> World:
    preset_cache.clear_local()
    return build_world(lantern, alice, "Lantern", 710_000_000_000_000_000)


@pytest.fixture
def harbor_world(harbor, charlie) -> World:
    return build_world(harbor, charlie, CANARY, 720_000_000_000_000_000)
