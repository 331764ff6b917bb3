"""The audit log records only the actions it declares, and the audit page has words for each."""

from __future__ import annotations

import pytest

from servers.audit_actions import AuditAction
from servers.models import AuditEvent
from servers.templatetags.audit import action_words

pytestmark = pytest.mark.django_db


def test_an_action_the_log_does_not_declare_is_refused_and_nothing_is_stored(lantern, alice):
    before = AuditEvent.objects.count()
    with pytest.raises(ValueError):
        AuditEvent.record(server=lantern, actor=alice, action="preset.teleport")  # type: ignore[arg-type]  # a string no action declares
    assert AuditEvent.objects.count() == before


def test_a_declared_action_is_stored_as_its_code(lantern, alice):
    AuditEvent.record(server=lantern, actor=alice, action=AuditAction.PRESET_ACTIVATE)
    stored = AuditEvent.objects.filter(server=lantern).values_list("action", flat=True).first()
    assert stored == "preset.activate"


@pytest.mark.parametrize("action", list(AuditAction), ids=lambda a: a.value)
def test_the_audit_page_names_every_declared_action_in_words(action):
    words = action_words(action)
    assert words and "." not in words and "_" not in words
