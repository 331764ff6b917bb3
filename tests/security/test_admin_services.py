"""Django admin goes through the services (issue 50, item 7): every model it shows is read-only,
except adding a server and giving, changing or taking away a membership, which the services do with
an audit event under the superuser's name. The walk reads the admin site's own registry, so a model
registered later is checked without editing this test."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.db.models import Model
from django.urls import reverse

from servers.audit_actions import AuditAction
from servers.models import ApiToken, AuditEvent, Membership, Role, Server
from tests.present import present

from .conftest import World

# Models the admin may write, and how: each is tested below.
WRITABLE = {
    Membership: "membership_set / membership_remove",
    Server: "server_ensure (adding only)",
}


def _accounts(model: type[Model]) -> bool:
    """Django's own accounts and groups: global, no server's cache or audit covers them."""
    return model._meta.app_label == "auth"


def test_every_model_the_admin_shows_is_read_only_there(client, superuser, lantern_world: World):
    client.force_login(superuser)
    request = client.get("/admin/").wsgi_request
    checked = []
    for model, model_admin in admin.site._registry.items():
        if _accounts(model):
            continue
        meta = model._meta
        if model not in WRITABLE:
            assert not model_admin.has_add_permission(request), meta.label
        if model is not Membership:
            assert not model_admin.has_change_permission(request), meta.label
            assert not model_admin.has_delete_permission(request), meta.label
        row = model._default_manager.first()
        if row is None or model is Membership:
            continue
        before = model._default_manager.filter(pk=row.pk).values().get()
        change = reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[row.pk])
        delete = reverse(f"admin:{meta.app_label}_{meta.model_name}_delete", args=[row.pk])
        assert client.post(change, {"name": "renamed in admin"}).status_code in (302, 403), meta.label
        assert client.post(delete, {"post": "yes"}).status_code == 403, meta.label
        assert model._default_manager.filter(pk=row.pk).values().get() == before, meta.label
        checked.append(meta.label)
    # the models that carry a cache stamp or the audit log are among those walked
    assert {"servers.ApiToken", "servers.Server", "servers.AuditEvent", "presets.Preset"} <= set(checked)
    assert {"servers.Channel", "memory.StmEntry"} <= set(checked)


def test_a_token_cannot_be_revoked_in_the_admin_and_the_tokens_page_revokes_it_at_once(
    client, superuser, alice, lantern_world: World, django_capture_on_commit_callbacks
):
    token = ApiToken.objects.get(pk=lantern_world.token_id)
    client.force_login(superuser)
    url = reverse("admin:servers_apitoken_change", args=[token.pk])
    client.post(url, {"name": token.name, "revoked_at_0": "2026-01-01", "revoked_at_1": "00:00:00"})
    token.refresh_from_db()
    assert token.revoked_at is None
    api = f"/api/v1/servers/{lantern_world.server.pk}/presets"
    bearer = {"HTTP_AUTHORIZATION": f"Bearer {lantern_world.live_token}"}
    assert client.get(api, **bearer).status_code == 200
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            reverse("servers:token-revoke", args=[lantern_world.server.pk, token.pk]), {"confirmed": "1"}
        )
    assert client.get(api, **bearer).status_code == 401


@pytest.mark.django_db
def test_a_membership_given_changed_and_taken_away_in_the_admin_is_audited(
    client, superuser, django_user_model, lantern
):
    dora = django_user_model._default_manager.create_user(username="dora", password="correct horse battery")
    client.force_login(superuser)
    added = client.post(
        reverse("admin:servers_membership_add"), {"user": dora.pk, "server": lantern.pk, "role": Role.SUPPORT}
    )
    assert added.status_code == 302
    membership = Membership.objects.get(user=dora, server=lantern)
    assert membership.role == Role.SUPPORT
    client.post(reverse("admin:servers_membership_change", args=[membership.pk]), {"role": Role.MODERATOR})
    assert Membership.objects.get(pk=membership.pk).role == Role.MODERATOR
    client.post(reverse("admin:servers_membership_delete", args=[membership.pk]), {"post": "yes"})
    assert not Membership.objects.filter(pk=membership.pk).exists()
    events = list(
        AuditEvent.objects.filter(server=lantern, target_type="membership")
        .order_by("pk")
        .values_list("action", "actor__username", "detail")
    )
    assert events == [
        (AuditAction.MEMBERSHIP_SET, "root", {"user": "dora", "role": "support"}),
        (AuditAction.MEMBERSHIP_SET, "root", {"user": "dora", "role": "moderator"}),
        (AuditAction.MEMBERSHIP_REMOVE, "root", {"user": "dora", "role": "moderator"}),
    ]
    client.force_login(dora)
    assert client.get(reverse("servers:server", args=[lantern.pk])).status_code in (403, 404)


@pytest.mark.django_db
def test_a_server_added_in_the_admin_is_audited_under_the_superuser(client, superuser):
    client.force_login(superuser)
    response = client.post(reverse("admin:servers_server_add"), {"id": "3003", "name": "Cellar Club"})
    assert response.status_code == 302
    assert Server.objects.get(pk=3003).name == "Cellar Club"
    event = AuditEvent.objects.get(server_id=3003)
    assert (event.action, present(event.actor).username) == (AuditAction.SERVER_CREATE, "root")
