"""Groups as stored: created, replaced and deleted through the services and `manage.py group`, the
refusals that store nothing, the engine's view from the cache, and what a card deletion does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from characters import services as card_services
from core.actors import SYSTEM
from groups import selectors, services
from groups.models import Group as GroupRow
from groups.models import GroupMember as MemberRow
from servers.models import AuditEvent
from tests.present import present

from .conftest import add_card, card_bytes

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


def make_party(lantern, **options):
    return services.group_save(
        server=lantern, name="Party", members=["Mira", "Tomas", "Old Tom"], by=SYSTEM, **options
    )


def test_a_group_keeps_its_members_in_the_order_given_with_their_mute_flags(lantern, party_cards):
    services.group_save(
        server=lantern,
        name="  Party  ",
        members=["Old Tom", "Mira", "Tomas"],
        muted=["Tomas"],
        mode="join_include_muted",
        join_prefix="<FIELDNAME> of {{char}}:",
        strategy="list",
        by=SYSTEM,
    )
    group = selectors.engine_group(lantern.pk, "Party")
    assert group is not None
    assert [(m.name, m.muted) for m in group.members] == [
        ("Old Tom", False),
        ("Mira", False),
        ("Tomas", True),
    ]
    assert group.mode == "join_include_muted" and group.strategy == "list"
    assert group.join_prefix == "<FIELDNAME> of {{char}}:" and group.allow_self_responses is False
    assert group.members[1].card.description == "Mira keeps the lighthouse."
    assert AuditEvent.objects.filter(server=lantern, action="group.create").count() == 1


@pytest.mark.parametrize(
    ("members", "muted", "sentence"),
    [
        (["Mira", "Zed"], [], "This server has no character card named “Zed”."),
        ([], [], "Name at least one member"),
        (["Mira"], ["Tomas"], "“Tomas” is muted but is not a member of the group."),
        (["Mira", "Mira"], [], "“Mira” is named twice"),
    ],
)
def test_a_refused_group_names_what_is_wrong_and_stores_nothing(
    lantern, party_cards, members, muted, sentence
):
    with pytest.raises(services.GroupError) as refused:
        services.group_save(server=lantern, name="Party", members=members, muted=muted, by=SYSTEM)
    assert sentence in refused.value.message
    assert (
        not GroupRow.objects.exists() and not AuditEvent.objects.filter(action__startswith="group").exists()
    )


def test_a_card_of_the_server_next_door_cannot_join(lantern, party_cards, harbor_card):
    with pytest.raises(services.GroupError, match="no character card named “Gull”"):
        services.group_save(server=lantern, name="Party", members=["Mira", "Gull"], by=SYSTEM)


def test_a_name_clash_is_refused_unless_replace_and_replacing_keeps_the_channels(
    lantern, party_cards, committed
):
    first = make_party(lantern)
    services.channel_group_set(server=lantern, channel_id=77, group=first, by=SYSTEM)
    with pytest.raises(services.GroupNameClash):
        services.group_save(server=lantern, name="Party", members=["Mira"], by=SYSTEM)
    assert [m.name for m in present(selectors.engine_group(lantern.pk, "Party")).members] == [
        "Mira",
        "Tomas",
        "Old Tom",
    ]
    with committed(execute=True):
        services.group_save(
            server=lantern, name="Party", members=["Tomas"], strategy="pooled", replace=True, by=SYSTEM
        )
    group = selectors.engine_group(lantern.pk, "Party")
    assert group is not None
    assert [m.name for m in group.members] == ["Tomas"] and group.strategy == "pooled"
    assert selectors.channel_group(lantern.pk, 77) == "Party"


def test_a_server_keeps_at_most_64_groups_and_a_group_32_members(lantern, party_cards):
    for number in range(64):
        services.group_save(server=lantern, name=f"G{number}", members=["Mira"], by=SYSTEM)
    with pytest.raises(services.GroupError, match="at most 64 groups"):
        services.group_save(server=lantern, name="One more", members=["Mira"], by=SYSTEM)
    with pytest.raises(services.GroupError, match="at most 32 members"):
        services.group_save(
            server=lantern, name="G0", members=[f"C{i}" for i in range(33)], replace=True, by=SYSTEM
        )


def test_the_engine_group_is_served_from_the_cache_without_queries(
    lantern, party_cards, django_assert_num_queries
):
    make_party(lantern)
    selectors.engine_group(lantern.pk, "Party")
    with django_assert_num_queries(0):
        assert present(selectors.engine_group(lantern.pk, "Party")).members[0].name == "Mira"


def test_a_replaced_card_is_seen_in_the_group_at_the_next_read(lantern, party_cards, committed):
    make_party(lantern)
    assert (
        present(selectors.engine_group(lantern.pk, "Party")).members[0].card.description
        == "Mira keeps the lighthouse."
    )
    with committed(execute=True):
        card_services.card_import(
            server=lantern,
            raw=card_bytes("Mira", description="Mira sails at dawn."),
            filename="m.json",
            on_clash="replace",
            by=SYSTEM,
        )
    group = selectors.engine_group(lantern.pk, "Party")
    assert group is not None
    assert [m.name for m in group.members] == ["Mira", "Tomas", "Old Tom"]
    assert group.members[0].card.description == "Mira sails at dawn."


def test_deleting_a_member_card_drops_it_from_the_group_and_the_others_keep_their_order(
    lantern, party_cards, committed
):
    make_party(lantern, muted=["Old Tom"])
    selectors.engine_group(lantern.pk, "Party")
    with committed(execute=True):
        card_services.card_delete(card=party_cards["Tomas"], by=SYSTEM)
    group = selectors.engine_group(lantern.pk, "Party")
    assert group is not None
    assert [(m.name, m.muted) for m in group.members] == [("Mira", False), ("Old Tom", True)]
    # Adding a new card under the old name does not bring it back.
    add_card(lantern, "Tomas")
    assert [m.name for m in present(selectors.engine_group(lantern.pk, "Party")).members] == [
        "Mira",
        "Old Tom",
    ]


def test_deleting_a_group_frees_its_channels(lantern, party_cards, committed):
    group = make_party(lantern)
    services.channel_group_set(server=lantern, channel_id=77, group=group, by=SYSTEM)
    assert selectors.channel_group(lantern.pk, 77) == "Party"
    with committed(execute=True):
        services.group_delete(group=group, by=SYSTEM)
    assert selectors.engine_group(lantern.pk, "Party") is None
    assert selectors.channel_group(lantern.pk, 77) is None and not MemberRow.objects.exists()
    assert AuditEvent.objects.filter(action="group.delete").count() == 1


def test_a_thread_uses_its_parent_channels_group_unless_it_has_its_own(lantern, party_cards, committed):
    party = make_party(lantern)
    duo = services.group_save(server=lantern, name="Duo", members=["Mira", "Tomas"], by=SYSTEM)
    services.channel_group_set(server=lantern, channel_id=77, group=party, by=SYSTEM)
    assert selectors.channel_group(lantern.pk, 78, parent_channel=77) == "Party"
    with committed(execute=True):
        services.channel_group_set(server=lantern, channel_id=78, group=duo, by=SYSTEM)
    assert selectors.channel_group(lantern.pk, 78, parent_channel=77) == "Duo"
    assert selectors.channel_group(lantern.pk, 79) is None


# -- the command line ---------------------------------------------------------------------------------


def cli(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    env = {"DATABASE_URL": f"sqlite:///{db}", "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )


@pytest.fixture
def cli_db(tmp_path) -> Path:
    db = tmp_path / "groups.sqlite3"
    env = {"DATABASE_URL": f"sqlite:///{db}", "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    for name in ("Mira", "Tomas", "Old Tom"):
        path = tmp_path / f"{name}.json"
        path.write_bytes(card_bytes(name))
        assert cli("card", "import", str(path), "--server", "5", "--json", db=db).returncode == 0
    return db


def test_the_command_line_creates_shows_lists_and_deletes_a_group(cli_db):
    created = cli(
        "group", "create", "--server", "5", "--name", "Party", "--members", "Old Tom, Mira,Tomas",
        "--muted", "Tomas", "--mode", "join_exclude_muted", "--join-prefix", "[<FIELDNAME>]",
        "--join-suffix", "[/]", "--strategy", "pooled", "--allow-self-responses", "--json", db=cli_db,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    expected = {
        "name": "Party",
        "members": [
            {"name": "Old Tom", "muted": False},
            {"name": "Mira", "muted": False},
            {"name": "Tomas", "muted": True},
        ],
        "mode": "join_exclude_muted",
        "join_prefix": "[<FIELDNAME>]",
        "join_suffix": "[/]",
        "strategy": "pooled",
        "allow_self_responses": True,
    }
    assert json.loads(created.stdout) == expected
    shown = cli("group", "show", "--server", "5", "--name", "Party", "--json", db=cli_db)
    assert json.loads(shown.stdout) == expected
    listed = cli("group", "list", "--server", "5", "--json", db=cli_db)
    assert json.loads(listed.stdout) == {"groups": [expected]}
    deleted = cli("group", "delete", "--server", "5", "--name", "Party", "--json", db=cli_db)
    assert deleted.returncode == 0 and json.loads(deleted.stdout) == {"deleted": "Party"}
    assert json.loads(cli("group", "list", "--server", "5", "--json", db=cli_db).stdout) == {"groups": []}


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (["--members", "Mira,Zed"], "“Zed”"),
        (["--members", ""], "at least one member"),
        (["--members", "Mira", "--muted", "Tomas"], "“Tomas” is muted"),
        (["--members", "Mira", "--mode", "shuffle"], "shuffle"),
    ],
)
def test_the_command_line_refuses_a_bad_group_in_one_line_and_stores_nothing(cli_db, arguments, named):
    refused = cli("group", "create", "--server", "5", "--name", "Party", *arguments, "--json", db=cli_db)
    assert refused.returncode == 2 and refused.stdout == ""
    assert len(refused.stderr.strip().splitlines()) == 1 and refused.stderr.startswith("error: ")
    assert named in refused.stderr
    assert json.loads(cli("group", "list", "--server", "5", "--json", db=cli_db).stdout) == {"groups": []}


def test_the_command_line_refuses_a_name_clash_without_replace(cli_db):
    assert (
        cli(
            "group", "create", "--server", "5", "--name", "Party", "--members", "Mira", "--json", db=cli_db
        ).returncode
        == 0
    )
    again = cli(
        "group", "create", "--server", "5", "--name", "Party", "--members", "Tomas", "--json", db=cli_db
    )
    assert again.returncode == 2 and "“Party”" in again.stderr and "--replace" in again.stderr
    replaced = cli(
        "group",
        "create",
        "--server",
        "5",
        "--name",
        "Party",
        "--members",
        "Tomas",
        "--replace",
        "--json",
        db=cli_db,
    )
    assert replaced.returncode == 0 and json.loads(replaced.stdout)["members"] == [
        {"name": "Tomas", "muted": False}
    ]


def test_the_command_line_gives_a_channel_a_group_and_refuses_an_unknown_one(cli_db):
    cli("group", "create", "--server", "5", "--name", "Party", "--members", "Mira", "--json", db=cli_db)
    done = cli("group", "channel", "--server", "5", "--channel", "77", "--name", "Party", "--json", db=cli_db)
    assert json.loads(done.stdout) == {"channel": "77", "group": "Party"}
    refused = cli(
        "group", "channel", "--server", "5", "--channel", "77", "--name", "Nope", "--json", db=cli_db
    )
    assert refused.returncode == 2 and "“Nope”" in refused.stderr
    refused = cli("group", "show", "--server", "5", "--name", "Nope", "--json", db=cli_db)
    assert refused.returncode == 2 and "“Nope”" in refused.stderr


def test_the_assemble_command_refuses_a_speaker_outside_the_group_in_one_line(cli_db, tmp_path):
    cli("group", "create", "--server", "5", "--name", "Party", "--members", "Mira,Tomas", "--json", db=cli_db)
    document = tmp_path / "turn.json"
    turn: dict[str, Any] = {
        "history": [{"role": "user", "name": "Ann", "content": "Hi"}],
        "group": {"name": "Party", "speaker": "Old Tom"},
    }
    document.write_text(json.dumps(turn))
    refused = cli("assemble", "--server", "5", "--buckets", str(document), "--json", db=cli_db)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr == "error: “Old Tom” is not a member of the group “Party”.\n"
    turn["group"]["speaker"] = "Tomas"
    document.write_text(json.dumps(turn))
    done = cli("assemble", "--server", "5", "--buckets", str(document), "--native", "--json", db=cli_db)
    assert done.returncode == 0 and "Tomas keeps the lighthouse." in done.stdout
