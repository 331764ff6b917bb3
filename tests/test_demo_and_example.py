"""What a new user meets first in a bare clone: the demo sample talks about the demo guild's own
channels and bot, and the example bot needs only its two requirements (issue 36)."""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.present import present

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.django_db
def test_the_demo_has_our_own_cards_in_a_group_that_a_channel_uses_and_runs_twice_safely():
    from groups.selectors import channel_group, groups_page
    from servers.models import Server

    call_command("demo_data", verbosity=0)
    call_command("demo_data", verbosity=0)
    (group,) = groups_page(Server.objects.get(pk=1001))
    assert [m["name"] for m in group["members"]] == ["Mira Lampwright", "Tomas Ferry", "Old Tom"]
    assert channel_group(1001, 900000000000000001) == "Lantern Inn"
    for path in (ROOT / "characters" / "demo_data").glob("*.json"):
        assert "Tavernkeep" in path.read_text()  # our own words, not a community card


@pytest.mark.django_db
def test_the_demo_sample_names_only_the_demo_guilds_channels_and_its_bot():
    from assembly.selectors import DEFAULT_SAMPLE_NAME, sample_bucket_named
    from servers.selectors import directory_names

    call_command("demo_data", verbosity=0)
    sample = json.dumps(present(sample_bucket_named(1001, DEFAULT_SAMPLE_NAME)).document, ensure_ascii=False)
    channels = set(directory_names(1001).channels.values())
    mentioned = set(re.findall(r"#([a-z][a-z-]+)", sample))
    assert mentioned and mentioned <= channels, mentioned - channels
    assert (
        "Tomori" not in sample and '"char": "Lantern"' in sample
    )  # the demo's memories call the bot Lantern


def test_the_example_bot_imports_only_the_standard_library_and_its_two_requirements():
    requirements = (ROOT / "examples" / "requirements.txt").read_text()
    named = {
        line.split(">=")[0].strip() for line in requirements.splitlines() if line and not line.startswith("#")
    }
    assert named == {"discord.py", "httpx"}
    tree = ast.parse((ROOT / "examples" / "discord_bot.py").read_text())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
    }
    outside = {name for name in imported if name not in sys.stdlib_module_names}
    assert outside == {"httpx", "discord"}, outside
