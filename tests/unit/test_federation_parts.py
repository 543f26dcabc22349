"""Federation's parts without a network: names, options, what ssh says, the host book,
the link registrations (docs/federation.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mux.config import HostSettings, Settings
from mux.dbus.caller import MAX_LINKS, CallerNotes
from mux.federation.host_book import HostBook
from mux.federation.hub import link_id
from mux.federation.ledger import HubLedger, SpawnKey
from mux.federation.ssh import classify, forward_argv, master_argv, where_argv
from mux.protocol.errors import InvalidArgument, PreconditionFailed
from mux.protocol.hosts import (
    WhereError,
    check_host_name,
    check_hub_id,
    parse_add_host,
    parse_where,
    unix_socket_path,
)


@pytest.mark.parametrize("name", ["sat", "build_01", "A" * 64])
def test_good_host_names(name: str) -> None:
    assert check_host_name(name) == name


@pytest.mark.parametrize("name", ["", "a b", "a-b", "x" * 65, "../etc", "é"])
def test_bad_host_names_are_refused_by_name(name: str) -> None:
    with pytest.raises(InvalidArgument, match="host name"):
        check_host_name(name)


def test_add_host_options() -> None:
    assert parse_add_host({"destination": ("s", "me@box")}).destination == "me@box"
    for options, needle in [
        ({}, "needs the option 'destination'"),
        ({"destination": ("i", 3)}, "must be a string"),
        ({"destination": ("s", "-oProxyCommand=x")}, "not an ssh destination"),
        ({"destination": ("s", "a b")}, "not an ssh destination"),
        ({"destination": ("s", "me@box"), "muxctl": ("s", "rm -rf /")}, "unknown AddHost option"),
    ]:
        with pytest.raises(InvalidArgument, match=needle):
            parse_add_host(options)


def test_where_answers() -> None:
    where = parse_where(
        '{"bus": "unix:path=/run/user/1/bus", "attach": "/run/user/1/mux/mux.sock"}'
    )
    assert (where.bus, where.attach) == ("unix:path=/run/user/1/bus", "/run/user/1/mux/mux.sock")
    assert parse_where(where.to_json()) == where
    for text in ["", "[]", '{"bus": 1, "attach": "x"}', "Welcome!\n{}"]:
        with pytest.raises(WhereError):
            parse_where(text)


def test_socket_files_of_bus_addresses() -> None:
    assert unix_socket_path("unix:path=/run/user/1000/bus") == "/run/user/1000/bus"
    assert unix_socket_path("unix:abstract=x;unix:path=/tmp/a%20b,guid=1") == "/tmp/a b"
    assert unix_socket_path("unix:abstract=/tmp/dbus-x") is None
    assert unix_socket_path("tcp:host=localhost,port=1") is None


def test_hub_ids_are_sixteen_bytes() -> None:
    assert check_hub_id(bytes(16)) == bytes(16)
    with pytest.raises(InvalidArgument, match="16 bytes, not 3"):
        check_hub_id(b"abc")


def test_ssh_commands_are_safe_and_non_interactive() -> None:
    ssh = ["ssh", "-F", "cfg"]
    master = master_argv(ssh, "me@box", "/r/ssh")
    assert master[:3] == ssh and master[-2:] == ["--", "me@box"]
    for option in ("BatchMode=yes", "StrictHostKeyChecking=yes", "StreamLocalBindUnlink=yes"):
        assert option in master
    assert where_argv(ssh, "me@box", "/r/ssh", "muxctl")[-3:] == [
        "--",
        "me@box",
        "muxctl where --json",
    ]
    forward = forward_argv(ssh, "box", "/r/ssh", [("/r/bus", "/s/bus"), ("/r/a", "/s/a")])
    assert forward[3:7] == ["-S", "/r/ssh", "-O", "forward"]
    assert forward[-6:-2] == ["-L", "/r/bus:/s/bus", "-L", "/r/a:/s/a"]


@pytest.mark.parametrize(
    ("stderr", "status", "refused", "needle"),
    [
        ("Host key verification failed.\r\n", None, True, "host key"),
        ("@@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @@@", None, True, "host key"),
        ("root@10.0.0.2: Permission denied (publickey).", None, True, "refused the login"),
        (
            "channel 3: open failed: administratively prohibited: open failed",
            None,
            False,
            "AllowStreamLocalForwarding",
        ),
        ("bash: line 1: muxctl: command not found", 127, False, "mux is not installed"),
        ("ssh: connect to host 10.0.0.2 port 22: No route to host", None, False, "No route"),
    ],
)
def test_what_ssh_says_is_classified(
    stderr: str, status: int | None, refused: bool, needle: str
) -> None:
    failure = classify("box", stderr, status=status)
    assert failure.refused is refused
    assert needle in failure.message


def _settings(**hosts: str) -> Settings:
    return Settings(hosts={name: HostSettings(destination=d) for name, d in hosts.items()})


def test_the_host_book_keeps_added_hosts_durably(tmp_path: Path) -> None:
    file = tmp_path / "state" / "hosts.json"
    book = HostBook(_settings(conf="me@conf"), file)
    book.load()
    book.add("sat", "me@sat")
    assert [h.name for h in book.hosts()] == ["conf", "sat"]
    assert json.loads(file.read_text())["hosts"] == {"sat": "me@sat"}
    assert file.stat().st_mode & 0o777 == 0o600
    again = HostBook(_settings(conf="me@conf"), file)
    again.load()
    assert again.get("sat").destination == "me@sat" and not again.get("sat").from_config
    with pytest.raises(InvalidArgument, match="exists already"):
        again.add("sat", "me@other")
    with pytest.raises(InvalidArgument, match=r"config\.toml"):
        again.remove("conf")
    with pytest.raises(InvalidArgument, match="there is no host 'nope'"):
        again.remove("nope")
    again.remove("sat")
    assert [h.name for h in again.hosts()] == ["conf"]
    assert json.loads(file.read_text())["hosts"] == {}


def test_a_damaged_hosts_file_loses_nothing_configured(tmp_path: Path) -> None:
    file = tmp_path / "hosts.json"
    file.write_text('{"format": 1, "hosts": {"bad name": "x"}}')
    book = HostBook(_settings(conf="me@conf"), file)
    book.load()
    assert [h.name for h in book.hosts()] == ["conf"]
    assert file.read_text().startswith('{"format": 1, "hosts": {"bad name"'), "left alone"


def test_link_registrations_are_bounded_and_end_with_the_bus() -> None:
    notes = CallerNotes()
    for n in range(MAX_LINKS + 5):
        notes.register_link(f":1.{n}", bytes(16))
    assert len(notes._links) == MAX_LINKS
    assert ":1.0" not in notes._links and f":1.{MAX_LINKS + 4}" in notes._links
    notes.new_bus()
    assert notes._links == {}


def test_the_ledger_counts_early_and_nameless_uses_against_a_spawn() -> None:
    ledger = HubLedger()
    early = SpawnKey("sat", b"t" * 16, 7)
    ledger.mark_use("sat", 7, ":1.9")  # before the spawn's answer came back
    ledger.spawned(early, ":1.5")
    with pytest.raises(PreconditionFailed, match="used by another"):
        ledger.check_kill(early, ["UNATTACHED_SINCE_SPAWN"])
    nameless = SpawnKey("sat", b"t" * 16, 8)
    ledger.spawned(nameless, ":1.5")
    ledger.mark_use("sat", 8, ":1.5")  # the spawner's own: no use
    ledger.check_kill(nameless, ["UNATTACHED_SINCE_SPAWN"])
    ledger.mark_use("sat", 8, None)  # nobody the hub can name: someone else
    with pytest.raises(PreconditionFailed):
        ledger.check_kill(nameless, ["UNATTACHED_SINCE_SPAWN"])
    with pytest.raises(PreconditionFailed, match="no record"):
        ledger.check_kill(SpawnKey("sat", b"u" * 16, 7), ["UNATTACHED_SINCE_SPAWN"])


def test_each_satellite_sees_its_own_id_of_the_hub() -> None:
    secret = bytes(range(16))
    ids = {link_id(secret, name) for name in ("a", "b")}
    assert len(ids) == 2 and all(len(i) == 16 for i in ids)
    assert link_id(secret, "a") == link_id(secret, "a")


@pytest.mark.parametrize("destination", ["a;b", "a|b", "$(x)", "`x`", "a b", "-x", "x'y"])
def test_destinations_a_shell_would_read_are_refused(destination: str) -> None:
    with pytest.raises(InvalidArgument, match="not an ssh destination"):
        parse_add_host({"destination": ("s", destination)})
