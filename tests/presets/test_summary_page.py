"""The import summary on the preset page: each finding said once, the long lists as lists."""

from __future__ import annotations

import pytest
from django.urls import reverse

from presets.services import preset_import
from tests.corpus import CORPUS, needs_corpus

pytestmark = [pytest.mark.django_db, needs_corpus]  # both tests read nemoengine-v10 from the corpus


@pytest.fixture
def nemo(lantern, alice):
    raw = (CORPUS / "pm" / "nemoengine-v10.json").read_bytes()
    return preset_import(server=lantern, raw=raw, filename="nemoengine-v10.json", by=alice).preset


def test_the_html_warning_is_said_once(client, alice, nemo):
    client.force_login(alice)
    html = client.get(
        reverse("presets:detail", args=[nemo.server_id, nemo.pk]) + "?imported=1"
    ).content.decode()
    assert html.count("Discord shows HTML tags as plain text") == 1
    assert 'data-testid="summary-html"' in html


def test_kept_but_not_applied_is_a_list_without_repeats(client, alice, nemo):
    client.force_login(alice)
    response = client.get(reverse("presets:detail", args=[nemo.server_id, nemo.pk]))
    kept = next(group for group in response.context["summary_groups"] if group.key == "kept")
    assert len(kept.items) > 5 and len(set(kept.items)) == len(kept.items)
    html = response.content.decode()
    section = html[html.index('data-testid="summary-kept"') :]
    section = section[: section.index("</section>")]
    assert section.count("<li>") == len(kept.items)
    assert ", " not in section.split("<ul", 1)[1]  # no comma run
