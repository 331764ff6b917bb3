"""What A's dashboard pages read while B floods the same process (issue 50, item 2): each query
and each trip to the shared cache hands the interpreter lock back, and a page thread waits for it
again behind the threads refusing B's requests. The counts below are written from what each page
must read; the role is still checked on every page (tests/security/test_matrix.py)."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.urls import reverse

from core import offload
from devtools.factories import DEFAULT_BUCKETS, make_preset
from presets import services as preset_services
from presets.sampling import cache as sampling_cache
from servers.generational_cache import read_together


@pytest.fixture
def steady(settings):
    """The process checked its caches' stamps a moment ago, as a busy process has."""
    settings.CACHE_STAMP_CHECK_SECONDS = 3600


def test_bobs_presets_page_reads_his_session_account_the_server_with_his_role_and_the_lists(
    steady, client, bob, lantern, django_assert_num_queries
):
    client.force_login(bob)
    url = reverse("presets:list", args=[lantern.pk])
    assert client.get(url).status_code == 200
    # his session, his account, the Lantern with his role on it, its presets, its channels' own
    # presets, its channels
    with django_assert_num_queries(6):
        assert client.get(url).status_code == 200


def test_charlie_is_still_refused_the_lantern_and_bob_an_admins_page(client, bob, charlie, lantern):
    client.force_login(charlie)  # not a member: the server and his (missing) role in one query
    assert client.get(reverse("presets:list", args=[lantern.pk])).status_code == 404
    client.force_login(bob)  # a moderator
    assert client.get(reverse("presets:upload", args=[lantern.pk])).status_code == 403


def test_bobs_small_preview_reads_his_session_account_the_server_with_his_role_and_its_sizes(
    steady, settings, client, alice, bob, lantern, django_assert_num_queries
):
    settings.OFFLOAD_WORKERS = 2  # as served: the preview's size decides where it is made
    offload.shut_down()
    contents = [(f"rule{i}", f"Rule {i}: the lamp stays lit.", True) for i in range(30)]
    preset_services.preset_import(
        server=lantern, raw=make_preset(*contents), filename="p.json", activate=True, by=alice
    )
    client.force_login(bob)
    url = reverse("assembly:preview-render", args=[lantern.pk])
    form = {"document": DEFAULT_BUCKETS.read_text(encoding="utf-8")}
    try:
        assert client.post(url, form, HTTP_HX_REQUEST="true").status_code == 200
        # his session, his account, the Lantern with his role, what the preview draws on (one
        # query: it is small); the preset, the lorebooks and the rest come from the caches, and
        # the page's pickers (samples, presets, conversations, channels) are not in htmx's answer
        with django_assert_num_queries(4):
            shown = client.post(url, form, HTTP_HX_REQUEST="true")
        assert shown.status_code == 200 and "Rule 29: the lamp stays lit." in shown.content.decode()
        assert offload._current is None  # made in the web thread
    finally:
        offload.shut_down()


def test_the_whole_preview_page_still_shows_its_pickers(client, alice, lantern):
    preset_services.preset_import(
        server=lantern, raw=make_preset(("greet", "Hello.", True)), filename="Inn.json", by=alice
    )
    client.force_login(alice)
    url = reverse("assembly:preview-render", args=[lantern.pk])
    html = client.post(url, {"document": DEFAULT_BUCKETS.read_text(encoding="utf-8")}).content.decode()
    assert "Inn (active)" in html


def test_a_current_entry_read_at_a_blocks_start_serves_each_of_its_lookups(
    steady, lantern, django_assert_num_queries
):
    first = sampling_cache.get_sampling_choice(lantern.pk)  # read, and kept in the shared cache
    with read_together(lantern.pk):
        assert sampling_cache.get_sampling_choice(lantern.pk) == first
        cache.delete(sampling_cache.CHOICE.entry_key(lantern.pk))  # only the block's read holds it now
        with django_assert_num_queries(0):
            assert sampling_cache.get_sampling_choice(lantern.pk) == first  # the preview's second assembly


def test_a_missing_entry_is_read_again_after_a_blocks_lookup_filled_it(steady, lantern):
    with read_together(lantern.pk):  # nothing in the shared cache yet
        first = sampling_cache.get_sampling_choice(lantern.pk)  # from the database, then stored
        assert cache.get(sampling_cache.CHOICE.entry_key(lantern.pk)) is not None
        assert sampling_cache.get_sampling_choice(lantern.pk) == first
