"""The editor pages as admins use them without JavaScript: edit, add, duplicate, delete, move,
reorder, and what happens when two admins edit at once."""

from __future__ import annotations

import pytest
from django.urls import reverse

from core.actors import SYSTEM
from presets.models import PresetNode
from servers.models import Role
from servers.services import membership_set
from tests.present import present
from tests.presets.editor.conftest import node, order

pytestmark = pytest.mark.django_db


@pytest.fixture
def edith(django_user_model, lantern):
    """A second admin of the Lantern Guild, editing at the same time as alice."""
    user = django_user_model.objects.create_user(username="edith", password="correct horse battery")
    membership_set(server=lantern, user=user, role=Role.ADMIN, by=SYSTEM)
    return user


def url(name: str, preset, *extra) -> str:
    return reverse(f"presets:{name}", args=[preset.server_id, preset.pk, *extra])


def test_alice_edits_a_nodes_text_role_depth_and_triggers(client, alice, tavern):
    client.force_login(alice)
    rules = node(tavern, "rules")
    form = client.get(url("node-edit", tavern, rules.pk))
    assert form.status_code == 200 and "No fighting in the tavern." in form.content.decode()
    response = client.post(
        url("node-edit", tavern, rules.pk),
        {
            "version": "1",
            "name": "House rules",
            "content": "No <b>fighting</b>. {{mystery_macro}}",
            "role": "user",
            "injection_position": "1",
            "injection_depth": " 2 ",
            "injection_order": "50",
            "injection_trigger": ["normal", "swipe"],
        },
        follow=True,
    )
    rules.refresh_from_db()
    assert (
        rules.name,
        rules.role,
        rules.injection_position,
        rules.injection_depth,
        rules.injection_order,
    ) == (
        "House rules",
        "user",
        1,
        2,
        50,
    )
    assert rules.injection_trigger == ["normal", "swipe"]
    shown = [str(m) for m in response.context["messages"]]
    assert any("HTML" in m for m in shown) and any("mystery_macro" in m for m in shown)


def test_a_bad_number_is_normalised_like_an_import_and_said(client, alice, tavern):
    client.force_login(alice)
    rules = node(tavern, "rules")
    response = client.post(
        url("node-edit", tavern, rules.pk),
        {"version": "1", "name": "Rules", "content": "x", "role": "narrator", "injection_depth": "deep"},
        follow=True,
    )
    rules.refresh_from_db()
    assert rules.role == "system" and rules.injection_depth == 4
    shown = " ".join(str(m) for m in response.context["messages"])
    assert "role" in shown and "depth" in shown.lower()


def test_bob_and_carol_read_versions_but_cannot_edit(client, bob, carol, tavern):
    rules = node(tavern, "rules")
    for persona in (bob, carol):
        client.force_login(persona)
        assert client.get(url("versions", tavern)).status_code == 200
        assert client.get(url("version-diff", tavern) + "?from=1&to=1").status_code == 200
        assert client.get(url("node-edit", tavern, rules.pk)).status_code == 403
        assert client.post(url("node-move", tavern, rules.pk), {"direction": "up"}).status_code == 403
    assert order(tavern)[2] == "rules"


def test_charlie_cannot_see_the_versions_of_another_servers_preset(client, charlie, tavern):
    client.force_login(charlie)
    assert client.get(url("versions", tavern)).status_code == 404


def test_move_buttons_reorder_without_javascript(client, alice, tavern):
    client.force_login(alice)
    client.post(url("node-move", tavern, node(tavern, "secret").pk), {"direction": "up", "version": "1"})
    assert order(tavern)[:4] == ["main", "greet", "secret", "rules"]
    client.post(url("node-move", tavern, node(tavern, "main").pk), {"direction": "up", "version": "2"})
    assert order(tavern)[0] == "main"  # already first: stays


def test_add_duplicate_and_delete_follow_the_marker_rules(client, alice, tavern):
    client.force_login(alice)
    client.post(
        url("node-add", tavern),
        {"name": "Toast", "content": "Raise a glass.", "after": str(node(tavern, "greet").pk)},
    )
    assert order(tavern)[2] != "rules" and PresetNode.objects.get(preset=tavern, name="Toast").position == 2
    client.post(url("node-duplicate", tavern, node(tavern, "rules").pk))
    assert PresetNode.objects.filter(
        preset=tavern, name="Rules (copy)", content="No fighting in the tavern."
    ).exists()

    refused = client.post(
        url("node-delete", tavern, node(tavern, "chatHistory").pk), {"confirmed": "1"}, follow=True
    )
    assert any("cannot be deleted" in str(m) for m in refused.context["messages"])
    refused = client.post(url("node-duplicate", tavern, node(tavern, "charDescription").pk), follow=True)
    assert any("Markers cannot be duplicated" in str(m) for m in refused.context["messages"])
    client.post(url("node-delete", tavern, node(tavern, "secret").pk), {"confirmed": "1"})
    assert "secret" not in order(tavern) and "chatHistory" in order(tavern)


def test_the_node_list_shows_tokens_per_node_and_the_enabled_total(client, alice, tavern):
    client.force_login(alice)
    page = client.get(url("detail", tavern)).content.decode()
    assert 'data-testid="node-tokens">6<' in page  # "Greet every guest warmly." is 6 tokens in o200k_base
    total = sum(n.tokens for n in tavern.nodes.filter(enabled=True))
    assert f"{total} tokens in the enabled nodes" in page


def test_two_admins_editing_the_same_node_never_lose_an_edit_silently(client, alice, edith, tavern):
    rules = node(tavern, "rules")
    client.force_login(alice)
    assert client.get(url("node-edit", tavern, rules.pk)).context["preset"].version == 1

    client.force_login(edith)
    client.post(
        url("node-edit", tavern, rules.pk), {"version": "1", "name": "Rules", "content": "Edith's rules."}
    )

    client.force_login(alice)
    late = client.post(
        url("node-edit", tavern, rules.pk), {"version": "1", "name": "Rules", "content": "Alice's rules."}
    )
    assert late.status_code == 409
    page = late.content.decode()
    assert "Nothing was saved" in page and "Edith&#x27;s" in page and "Alice&#x27;s rules." in page
    rules.refresh_from_db()
    assert rules.content == "Edith's rules."
    assert late.context["conflict"].current == 2

    again = client.post(
        url("node-edit", tavern, rules.pk), {"version": "2", "name": "Rules", "content": "Alice's rules."}
    )
    assert again.status_code == 302
    rules.refresh_from_db()
    assert rules.content == "Alice's rules."


def test_edits_of_different_nodes_at_once_both_land(client, alice, edith, tavern):
    client.force_login(edith)
    client.post(
        url("node-edit", tavern, node(tavern, "greet").pk),
        {"version": "1", "name": "Greet", "content": "Wave."},
    )
    client.force_login(alice)
    response = client.post(
        url("node-edit", tavern, node(tavern, "rules").pk),
        {"version": "1", "name": "Rules", "content": "Calm."},
    )
    assert response.status_code == 302
    assert node(tavern, "greet").content == "Wave." and node(tavern, "rules").content == "Calm."


def test_a_reorder_from_a_stale_page_is_refused_with_the_changes(client, alice, edith, tavern):
    ids = list(PresetNode.objects.filter(preset=tavern).order_by("position").values_list("pk", flat=True))
    client.force_login(edith)
    client.post(url("node-move", tavern, ids[3]), {"direction": "up", "version": "1"})
    client.force_login(alice)
    swapped = [ids[1], ids[0], *ids[2:]]
    response = client.post(url("nodes-reorder", tavern), {"version": "1", "order": [str(i) for i in swapped]})
    assert response.status_code == 409 and b"diff-moved" in response.content
    assert order(tavern)[0] == "main"

    response = client.post(
        url("nodes-reorder", tavern),
        {"version": "2", "order": [str(i) for i in swapped]},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200 and order(tavern)[:2] == ["greet", "main"]
    assert b'id="node-list"' in response.content


def test_a_version_downloads_as_sillytavern_json_for_admins_only(client, alice, bob, tavern):
    client.force_login(alice)
    response = client.get(url("version-download", tavern) + "?version=1")
    assert response.status_code == 200 and "Tavern v1.json" in response["Content-Disposition"]
    assert response.json()["prompt_order"][-1]["character_id"] == 100001
    client.force_login(bob)
    assert client.get(url("version-download", tavern) + "?version=1").status_code == 403


def test_alice_rolls_back_from_the_versions_page(client, alice, tavern):
    client.force_login(alice)
    client.post(url("node-delete", tavern, node(tavern, "greet").pk), {"version": "1", "confirmed": "1"})
    page = client.get(url("versions", tavern)).content.decode()
    assert "deleted “Greet”" in page
    client.post(url("rollback", tavern), {"to": "1"})
    assert "greet" in order(tavern)
    diff = client.get(url("version-diff", tavern) + "?from=1&to=2").content.decode()
    assert 'data-testid="diff-removed"' in diff and "greet" in diff


def test_a_re_upload_shows_what_it_would_change_before_replacing(client, alice, tavern, lantern):
    from tests.presets.conftest import make_preset, upload

    client.force_login(alice)
    node(tavern, "rules").__class__.objects.filter(pk=node(tavern, "rules").pk).update(enabled=False)
    raw = make_preset(("greet", "Greet guests by name.", True), ("rules", "No fighting.", True))
    clash = upload(client, lantern.id, raw, "Tavern.json")
    assert clash.status_code == 409
    token = clash.context["pending"]
    review = client.post(url_upload(lantern), {"pending": token, "resolve": "replace"})
    page = review.content.decode()
    assert review.status_code == 200 and 'data-testid="replace-review"' in page
    assert 'data-testid="diff-removed"' in page and "<code>secret</code>" in page
    assert "<ins>guests by name.</ins>" in page  # the word-level diff of greet
    assert order(tavern)[3] == "secret"  # nothing replaced yet

    done = client.post(url_upload(lantern), {"pending": token, "resolve": "replace", "confirm": "1"})
    assert done.status_code == 302
    from presets.models import Preset

    replaced = Preset.objects.get(server=lantern, name="Tavern")
    assert "secret" not in order(replaced) and not node(replaced, "rules").enabled  # toggles carried over
    assert present(replaced.versions.order_by("-number").first()).kind == "replace"


def test_choosing_replace_up_front_also_shows_the_changes_first(client, alice, tavern, lantern):
    from tests.presets.conftest import make_preset, upload

    client.force_login(alice)
    response = upload(
        client, lantern.id, make_preset(("greet", "Hi.", True)), "Tavern.json", on_clash="replace"
    )
    assert response.status_code == 200 and 'data-testid="confirm-replace"' in response.content.decode()
    assert "secret" in order(tavern)


def url_upload(lantern) -> str:
    return reverse("presets:upload", args=[lantern.id])


HX = {"HTTP_HX_REQUEST": "true"}


def test_with_htmx_copy_and_delete_answer_only_the_rows_they_changed(client, alice, tavern):
    client.force_login(alice)
    greet = node(tavern, "greet")
    copied = client.post(url("node-duplicate", tavern, greet.pk), {"version": "1"}, **HX).content.decode()
    copy = PresetNode.objects.get(preset=tavern, name=f"{greet.name} (copy)")
    assert copied.count('<tr class="node') == 2  # the original and its copy, nothing else of the list
    assert copied.index(f'id="node-{greet.pk}"') < copied.index(f'id="node-{copy.pk}"')
    assert 'id="preset-version"' in copied and 'hx-swap-oob="true"' in copied

    deleted = client.post(
        url("node-delete", tavern, copy.pk), {"version": "2", "confirmed": "1"}, **HX
    ).content.decode()
    assert "<tr" not in deleted  # the row goes; only the counts and the status follow
    assert "Deleted" in deleted and not PresetNode.objects.filter(pk=copy.pk).exists()


def test_bob_opens_a_node_to_read_its_text_but_gets_no_form(client, bob, tavern):
    client.force_login(bob)
    rules = node(tavern, "rules")
    opened = client.get(url("node", tavern, rules.pk), **HX).content.decode()
    assert "No fighting in the tavern." in opened and "<form" not in opened
    page = client.get(url("node", tavern, rules.pk)).content.decode()  # without JavaScript: a page
    assert "No fighting in the tavern." in page and "<textarea" not in page
    assert client.post(url("node-edit", tavern, rules.pk), {"name": "x"}, **HX).status_code == 403


def test_an_in_place_save_over_edith_s_change_keeps_the_node_open_with_her_change(
    client, alice, edith, tavern
):
    rules = node(tavern, "rules")
    fields = {"name": "Rules", "role": "system", "injection_position": "0"}
    client.force_login(edith)
    client.post(url("node-edit", tavern, rules.pk), {**fields, "version": "1", "content": "Edith's rules."})
    client.force_login(alice)
    answer = client.post(
        url("node-edit", tavern, rules.pk), {**fields, "version": "1", "content": "Alice's rules."}, **HX
    ).content.decode()
    assert 'data-testid="edit-conflict"' in answer
    assert "Alice&#x27;s rules." in answer and "<textarea" in answer  # her text is kept, still open
    node_now = node(tavern, "rules")
    assert node_now.content == "Edith's rules."


def test_with_htmx_alice_adds_a_node_and_gets_its_row_alone(client, alice, tavern):
    client.force_login(alice)
    form = client.get(url("node-add", tavern), **HX).content.decode()
    assert form.startswith('<tr class="node is-open') and 'id="node-new"' in form
    answer = client.post(
        url("node-add", tavern),
        {
            "name": "Closing time",
            "content": "The bell rings at two.",
            "role": "system",
            "injection_position": "0",
        },
        **HX,
    ).content.decode()
    added = PresetNode.objects.get(preset=tavern, name="Closing time")
    assert answer.count("<tr") == 1 and f'id="node-{added.pk}"' in answer
    assert order(tavern)[-1] == added.identifier  # at the end, where the in-place row was opened
    assert client.get(url("node-add", tavern), {"cancel": "1"}, **HX).content == b""


def test_saving_one_node_of_a_preset_with_chat_history_raises_no_false_alarm_about_it(client, alice, tavern):
    """The preset has an enabled Chat History node: saving another node must not claim it has none."""
    assert node(tavern, "chatHistory").enabled
    client.force_login(alice)
    rules = node(tavern, "rules")
    response = client.post(
        url("node-edit", tavern, rules.pk),
        {"version": "1", "name": "Rules", "content": "No fighting. <b>Ever</b>.", "role": "system"},
        follow=True,
    )
    shown = " ".join(str(m) for m in response.context["messages"])
    assert "HTML" in shown  # the node's own warning is still said
    assert "Chat History" not in shown


def test_the_enabled_total_is_counted_once_and_again_after_alice_switches_a_node_off(
    client, alice, tavern, django_capture_on_commit_callbacks
):
    client.force_login(alice)

    def total_shown() -> str:
        page = client.get(url("detail", tavern)).content.decode()
        return page.split(" tokens in the enabled nodes")[0].rsplit("· ", 1)[1]

    total = sum(n.tokens for n in tavern.nodes.filter(enabled=True))
    assert total_shown() == str(total)
    # A change made behind the services' back (no stamp bump) is not seen: the page reads the kept count.
    rules = node(tavern, "rules")
    PresetNode.objects.filter(pk=rules.pk).update(
        content="No fighting in the tavern, ever, by anyone at all."
    )
    assert total_shown() == str(total)

    with django_capture_on_commit_callbacks(execute=True):  # the switch commits, as a request's write does
        client.post(url("node-toggle", tavern, rules.pk), {"enabled": "0"})
    assert total_shown() == str(sum(n.tokens for n in tavern.nodes.filter(enabled=True)))
    assert total_shown() != str(total)
