"""`manage.py stm`: add, settings, review (the acceptance checks drive this interface)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from core.actors import SYSTEM
from memory.models import Channel, DiscordUser, StmEntry
from servers.models import Server

ROOT = Path(__file__).resolve().parents[2]


def stm(*args: str) -> str:
    out = StringIO()
    call_command("stm", *args, stdout=out)
    return out.getvalue()


def review(*args: str) -> dict:
    return json.loads(stm("review", "--server", "1", "--channel", "10", "--user", "7", "--json", *args))


def fails(capsys, *args: str) -> str:
    with pytest.raises(SystemExit) as exit_info:
        stm(*args)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    return err


def test_add_creates_the_server_channel_user_and_entry(db):
    stm("add", "--server", "1", "--channel", "11", "--user", "7", "--summary", "cats", "--messages", "12")
    entry = StmEntry.objects.get(channel__discord_id=11)
    assert Server.objects.filter(pk=1).exists()
    assert DiscordUser.objects.filter(pk=7).exists()
    assert (entry.summary, len(entry.messages)) == ("cats", 10)


def test_a_fresh_entry_from_another_channel_is_shown(db):
    stm("add", "--server", "1", "--channel", "11", "--user", "7", "--summary", "cats", "--age-hours", "2")
    result = review()
    assert result["entries"][0]["channel"] == 11
    assert result["entries"][0]["verdict"] == "shown"
    assert result["items"] == [
        {"role": "user", "text": "[System: You remember a recent conversation in <#11> (2 hours ago): cats]"}
    ]
    assert result["tail_directive"] is None


def test_age_hours_is_a_decimal_number_and_expiry_is_strict(db):
    stm("add", "--server", "1", "--channel", "11", "--user", "7", "--age-hours", "11.9")
    stm("add", "--server", "1", "--channel", "12", "--user", "7", "--age-hours", "12.1")
    verdicts = {e["channel"]: e["verdict"] for e in review()["entries"]}
    assert verdicts == {11: "shown", 12: "expired"}


def test_private_channels_and_threads_of_them_are_hidden(db):
    stm("add", "--server", "1", "--channel", "11", "--private", "--user", "7")
    stm("add", "--server", "1", "--channel", "12", "--parent", "11", "--user", "7")
    verdicts = {e["channel"]: e["verdict"] for e in review()["entries"]}
    assert verdicts == {11: "hidden_private_channel", 12: "hidden_private_parent"}


def test_settings_turn_the_bypass_on(db):
    stm("add", "--server", "1", "--channel", "11", "--private", "--user", "7")
    assert json.loads(stm("settings", "--server", "1", "--bypass", "on"))["stm_privacy_bypass"] is True
    assert review()["entries"][0]["verdict"] == "shown"


def test_another_servers_entry_follows_the_users_opt_in(db):
    stm("add", "--server", "2", "--channel", "21", "--user", "7", "--summary", "elsewhere")
    stm("add", "--server", "1", "--channel", "10", "--user", "7")
    assert review()["entries"][-1] == {
        **review()["entries"][-1],
        "channel": 21,
        "verdict": "hidden_no_opt_in",
    }
    stm("settings", "--server", "1", "--user", "7", "--opt-in", "on")
    assert review()["entries"][-1]["verdict"] == "hidden_no_opt_in"
    stm("settings", "--server", "2", "--user", "7", "--opt-in", "on")
    assert review()["entries"][-1]["verdict"] == "hidden_no_opt_in"  # server 1 receives none yet
    from memory.services import server_set_receive_other_servers
    from servers.models import Server

    server_set_receive_other_servers(server=Server.objects.get(pk=1), receive=True, by=SYSTEM)
    result = review()
    assert {e["channel"]: e["verdict"] for e in result["entries"]} == {10: "same_channel", 21: "shown"}
    assert "a channel in another server" in result["items"][0]["text"]


def test_the_cap_cuts_the_oldest(db):
    for channel, age in [(11, "1"), (12, "2"), (13, "3"), (14, "4")]:
        stm("add", "--server", "1", "--channel", str(channel), "--user", "7", "--age-hours", age)
    assert [(e["channel"], e["verdict"]) for e in review()["entries"]] == [
        (11, "shown"),
        (12, "shown"),
        (13, "shown"),
        (14, "cut_by_cap"),
    ]


def test_tools_and_six_messages_give_the_create_directive(db):
    stm("add", "--server", "1", "--channel", "10", "--user", "7", "--messages", "6")
    assert review()["tail_directive"] is None
    assert "update_short_term_memory" in review("--has-tools")["tail_directive"]
    assert review("--has-tools", "--provider", "novelai")["tail_directive"] is None


def test_tools_show_the_same_channel_summary_and_the_hint(db):
    stm("add", "--server", "1", "--channel", "10", "--user", "7", "--summary", "we talk")
    assert review()["items"] == []
    items = review("--has-tools")["items"]
    assert len(items) == 2
    assert "we talk" in items[0]["text"]


def test_a_dm_entry_is_in_no_guild_and_belongs_to_the_server_that_stored_it(db, capsys):
    stm("add", "--server", "1", "--dm", "--channel", "30", "--user", "7", "--summary", "dm")
    entry = StmEntry.objects.get(channel__discord_id=30)
    assert (entry.server_id, entry.owner_id) == (None, 1)
    assert Channel.objects.get(discord_id=30).is_dm
    assert "--server is required" in fails(capsys, "add", "--dm", "--channel", "31", "--user", "7")


def test_a_dm_entry_is_hidden_from_a_server_without_the_opt_in(db):
    stm("add", "--server", "1", "--dm", "--channel", "30", "--user", "7", "--summary", "dm")
    entries = review()["entries"]
    assert entries == [{**entries[0], "channel": 30, "verdict": "hidden_no_opt_in", "server": None}]


def test_reviewing_an_unknown_server_is_an_error(db, capsys):
    assert "no server 5" in fails(
        capsys, "review", "--server", "5", "--channel", "10", "--user", "7", "--json"
    )


def test_a_bad_id_is_an_error(db, capsys):
    assert "--channel" in fails(capsys, "add", "--server", "1", "--channel", "ten", "--user", "7")


def test_a_summary_over_the_limit_is_an_error(db, capsys):
    assert "limit is 1500" in fails(
        capsys, "add", "--server", "1", "--channel", "10", "--user", "7", "--summary", "x" * 1501
    )
    assert not StmEntry.objects.exists()


def test_opt_in_without_a_user_is_an_error(db, capsys):
    assert "--opt-in needs --user" in fails(capsys, "settings", "--server", "1", "--opt-in", "on")


def test_the_command_line_exits_2_with_one_error_line():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    proc = subprocess.run(
        [sys.executable, "manage.py", "stm", "add", "--server", "1", "--channel", "x", "--user", "7"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ")
    assert proc.stderr.count("\n") == 1


def test_another_servers_channel_with_the_same_id_is_not_this_servers_channel(db):
    stm("add", "--server", "2", "--channel", "21", "--user", "7", "--summary", "server two's")
    stm("add", "--server", "1", "--channel", "10", "--user", "7")
    out = json.loads(stm("review", "--server", "1", "--channel", "21", "--user", "7", "--json"))
    assert [(e["channel"], e["server"], e["verdict"]) for e in out["entries"]] == [
        (10, 1, "shown"),
        (21, 2, "hidden_no_opt_in"),
    ]
    assert "server two's" not in json.dumps(out["items"])


def test_a_dm_channel_is_reviewed_as_a_dm(db):
    stm("add", "--server", "99", "--dm", "--channel", "30", "--user", "7", "--summary", "this dm")
    stm(
        "add",
        "--server",
        "99",
        "--dm",
        "--channel",
        "31",
        "--user",
        "7",
        "--summary",
        "an older dm",
        "--age-hours",
        "1",
    )
    out = json.loads(stm("review", "--server", "99", "--channel", "30", "--user", "7", "--json"))
    assert [(e["channel"], e["verdict"]) for e in out["entries"]] == [(30, "same_channel"), (31, "shown")]
    assert "in a direct message" in out["items"][0]["text"]
