"""`python -m config.serve`: the web server's command line (the server itself runs in tests/scaling)."""

from __future__ import annotations

import pytest

from config.serve import parse_args


def test_the_server_listens_on_loopback_port_8000_with_two_workers_unless_told_otherwise(monkeypatch):
    monkeypatch.delenv("WEB_CONCURRENCY", raising=False)
    args = parse_args([])
    assert (args.host, args.port, args.workers, args.threads) == ("127.0.0.1", 8000, 2, 1)


def test_the_worker_count_comes_from_web_concurrency_as_compose_sets_it(monkeypatch):
    monkeypatch.setenv("WEB_CONCURRENCY", "4")
    assert parse_args(["--bind", "0.0.0.0:8000"]).workers == 4
    assert parse_args(["--workers", "3"]).workers == 3


@pytest.mark.parametrize(("value", "logged"), [("1", True), ("yes", True), ("0", False), ("", False)])
def test_the_access_log_is_on_when_access_log_says_so_as_compose_sets_it(monkeypatch, value, logged):
    monkeypatch.setenv("ACCESS_LOG", value)
    assert parse_args([]).access_log is logged
    assert parse_args(["--access-log"]).access_log is True


def test_the_project_is_served_unless_another_application_is_named():
    assert parse_args([]).app == "config.wsgi:application"
    assert parse_args(["--app", "bench.wsgi_echo:application"]).app == "bench.wsgi_echo:application"


def test_an_ipv6_address_is_given_in_brackets():
    args = parse_args(["--bind", "[::1]:9000"])
    assert (args.host, args.port) == ("::1", 9000)


@pytest.mark.parametrize("bind", ["8000", "localhost", "localhost:http", "127.0.0.1:0", "127.0.0.1:70000"])
def test_a_bind_without_a_usable_port_is_refused_in_one_line(bind, capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_args(["--bind", bind])
    assert exit_.value.code == 2
    assert f"--bind must be HOST:PORT, not '{bind}'" in capsys.readouterr().err


def test_zero_workers_is_refused(capsys):
    with pytest.raises(SystemExit):
        parse_args(["--workers", "0"])
    assert "'0' is not a positive whole number" in capsys.readouterr().err


def test_a_web_concurrency_that_is_not_a_count_is_refused_in_one_line(monkeypatch, capsys):
    monkeypatch.setenv("WEB_CONCURRENCY", "two")
    with pytest.raises(SystemExit):
        parse_args([])
    assert "WEB_CONCURRENCY: 'two' is not a positive whole number" in capsys.readouterr().err


def test_a_port_another_server_holds_is_refused_at_once_in_one_line_naming_it():
    import socket
    import subprocess
    import sys
    from pathlib import Path

    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        done = subprocess.run(
            [sys.executable, "-m", "config.serve", "--bind", f"127.0.0.1:{port}", "--workers", "1"],
            cwd=Path(__file__).resolve().parents[1],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        holder.close()
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert lines == [f"config.serve: cannot listen on 127.0.0.1:{port}: it is already in use."]
