"""Trust and limits on the desktop side (SPEC §12, docs/desktop.md): a search query is
bounded before it is searched, result ids are ASCII digits, notification actions and
logind's signals are obeyed only from the owner of the name, and text from panes is
shown with its control characters escaped. Every call goes over a real bus to a real
muxd; the forged signals come from a connection of the test's own."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus

from tests.desktop.conftest import (
    NOTIFICATIONS,
    NOTIFICATIONS_PATH,
    MockProcess,
    NotificationBus,
    recorder_script,
)
from tests.desktop.test_notifications import printing, wait_notifications
from tests.desktop.test_sleep import MANAGER, emit, inhibitors, logind  # noqa: F401
from tests.harness import (
    ERROR_PREFIX,
    Service,
    assert_answers,
    assert_readable_message,
    gdbus_refused,
    wait_for,
)

GNOME = ("org.gnome.Shell.SearchProvider2", "/org/mux/Mux1/SearchProvider")
KRUNNER = ("org.kde.krunner1", "/org/mux/Mux1/KRunner")
BUS_NAME = "org.mux.Mux1"
MANAGER_PATH = ("org.mux.Mux1.Manager", "/org/mux/Mux1")
ARABIC_INDIC_ONE = "\u0661"


@pytest.fixture
def searched(tmp_path: Path) -> Iterator[tuple[Service, Path]]:
    terminal, record = recorder_script(tmp_path)
    root = tmp_path / "mux"
    root.mkdir()
    config = f"terminal_command = [{json.dumps(str(terminal))}]\n"
    service = Service(root, bus_address=None, config=config).start()
    try:
        yield service, record
    finally:
        service.stop()


def _call(interface_path: tuple[str, str], member: str, signature: str = "", *body: Any) -> Message:
    interface, path = interface_path
    return Message(
        destination=BUS_NAME,
        path=path,
        interface=interface,
        member=member,
        signature=signature,
        body=list(body),
    )


async def _replies(address: str, *messages: Message) -> list[Message]:
    """Each message sent on a connection of its own, all at once; their replies."""
    buses = [await MessageBus(bus_address=address).connect() for _ in messages]
    try:
        replies = await asyncio.gather(*(b.call(m) for b, m in zip(buses, messages, strict=True)))
        assert all(reply is not None for reply in replies)
        return [reply for reply in replies if reply is not None]
    finally:
        for bus in buses:
            bus.disconnect()


def assert_invalid(service: Service, reply: Message, names: str) -> None:
    assert reply.message_type is MessageType.ERROR, reply.body
    assert reply.error_name == ERROR_PREFIX + "InvalidArgument", (reply.error_name, reply.body)
    (message,) = reply.body
    assert names in message, message
    assert_readable_message(service, message)


# -- bounded search -----------------------------------------------------------------------


def test_a_huge_query_is_refused_while_muxd_keeps_answering(
    searched: tuple[Service, Path],
) -> None:
    """KRunner's Match("a " * 1000000) once froze muxd; now it is refused at once, and
    a ListPanes sent beside it is answered."""
    service, _ = searched
    pane = service.spawn(["sleep", "600"], title="a pane")
    huge, listing = asyncio.run(
        _replies(
            service.bus_address,
            _call(KRUNNER, "Match", "s", "a " * 1_000_000),
            _call(MANAGER_PATH, "ListPanes"),
        )
    )
    assert_invalid(service, huge, "search_query_max_bytes")
    assert listing.message_type is MessageType.METHOD_RETURN, listing.body
    assert pane in service.panes()
    # The same for GNOME's lists: too many terms, too many bytes, too many ids.
    (many_terms, long_term, many_ids, many_previous) = asyncio.run(
        _replies(
            service.bus_address,
            _call(GNOME, "GetInitialResultSet", "as", ["a"] * 100_000),
            _call(GNOME, "GetInitialResultSet", "as", ["a" * 2_000_000]),
            _call(GNOME, "GetResultMetas", "as", [str(pane)] * 100_000),
            _call(GNOME, "GetSubsearchResultSet", "asas", [str(pane)] * 100_000, ["a"]),
        )
    )
    assert_invalid(service, many_terms, "search_query_max_terms")
    assert_invalid(service, long_term, "search_query_max_bytes")
    assert_invalid(service, many_ids, "result ids")
    assert_invalid(service, many_previous, "result ids")
    assert_answers(service)


def test_a_query_at_the_limits_is_searched(searched: tuple[Service, Path]) -> None:
    service, _ = searched
    pane = service.spawn(["sleep", "600"], title="pane")
    at_limit, over_terms, over_bytes = asyncio.run(
        _replies(
            service.bus_address,
            _call(KRUNNER, "Match", "s", " ".join(["pane"] * 32)),
            _call(KRUNNER, "Match", "s", " ".join(["pane"] * 33)),
            _call(GNOME, "GetInitialResultSet", "as", ["pane", "x" * 1021]),
        )
    )
    assert at_limit.message_type is MessageType.METHOD_RETURN, at_limit.body
    assert [match[0] for match in at_limit.body[0]] == [str(pane)]
    assert_invalid(service, over_terms, "at most 32 (search_query_max_terms)")
    assert_invalid(service, over_bytes, "1024 bytes (search_query_max_bytes)")


def test_the_limits_are_settings(tmp_path: Path) -> None:
    config = "search_query_max_terms = 2\nsearch_query_max_bytes = 16\n"
    service = Service(tmp_path, bus_address=None, config=config).start()
    try:
        message = gdbus_refused(
            service,
            "InvalidArgument",
            f"{KRUNNER[0]}.Match",
            "'one two three'",
            path=KRUNNER[1],
        )
        assert "at most 2 (search_query_max_terms)" in message
        message = gdbus_refused(
            service,
            "InvalidArgument",
            f"{GNOME[0]}.GetInitialResultSet",
            json.dumps(["seventeen-bytes!!"]),
            path=GNOME[1],
        )
        assert "longer than 16 bytes (search_query_max_bytes)" in message
    finally:
        service.stop()


# -- ids are ASCII digits -------------------------------------------------------------------


def test_a_result_id_in_other_digits_names_no_pane(searched: tuple[Service, Path]) -> None:
    """`int("\\u0661")` is 1: KRunner's Run("\\u0661", "kill") once closed pane 1."""
    service, record = searched
    pane = service.spawn(["sleep", "600"], title="first")
    assert pane == 1
    forged = chr(ord(ARABIC_INDIC_ONE) + pane - 1)
    message = gdbus_refused(
        service, "InvalidArgument", f"{KRUNNER[0]}.Run", f"'{forged}'", "'kill'", path=KRUNNER[1]
    )
    assert "not a pane id" in message
    gdbus_refused(
        service, "InvalidArgument", f"{KRUNNER[0]}.Run", f"'{forged}'", "''", path=KRUNNER[1]
    )
    gdbus_refused(
        service,
        "InvalidArgument",
        f"{GNOME[0]}.ActivateResult",
        f"'{forged}'",
        "[]",
        "0",
        path=GNOME[1],
    )
    (metas,) = asyncio.run(
        _replies(service.bus_address, _call(GNOME, "GetResultMetas", "as", [forged, "\uff11"]))
    )
    assert metas.body == [[]], "no meta for an id in other digits"
    assert pane in service.panes(), "the pane is left alone"
    assert not record.exists(), "no terminal was opened"


# -- search metas show controls as escapes --------------------------------------------------


def test_search_metas_escape_control_characters(
    tmp_path: Path, searched: tuple[Service, Path]
) -> None:
    """A pane's title, command and directory, as GNOME's metas and KRunner's matches
    show them: ESC, C1 and bidi controls written as escapes."""
    service, _ = searched
    directory = tmp_path / "d\x1b]0;PWNED\x07\x9b2J"
    directory.mkdir()
    argv = ["sh", "-c", "exec sleep 600", "evil\x1b]52;c;SGk=\x07"]
    pane = service.spawn(argv, title="evil \u202etxt.exe", cwd=str(directory))
    (metas, matches) = asyncio.run(
        _replies(
            service.bus_address,
            _call(GNOME, "GetResultMetas", "as", [str(pane)]),
            _call(KRUNNER, "Match", "s", "evil"),
        )
    )
    name = f"Pane {pane}: evil \\u202etxt.exe"
    description = (
        f"sh -c 'exec sleep 600' 'evil\\x1b]52;c;SGk=\\x07' — {tmp_path}/d\\x1b]0;PWNED\\x07\\x9b2J"
    )
    (meta,) = metas.body[0]
    assert (meta["name"].value, meta["description"].value) == (name, description)
    (match,) = matches.body[0]
    assert (match[1], match[5]["subtext"].value) == (name, description)


# -- notifications ------------------------------------------------------------------------------


async def _forge(address: str, *signals: Message) -> None:
    """Send `signals` from a connection that is not the notification server, then
    make a call to muxd on it: its reply comes after muxd has read them all."""
    bus = await MessageBus(bus_address=address).connect()
    try:
        for signal in signals:
            await bus.send(signal)
        reply = await bus.call(_call(MANAGER_PATH, "ListPanes"))
        assert reply is not None and reply.message_type is MessageType.METHOD_RETURN
    finally:
        bus.disconnect()


def _notification_signal(
    member: str, signature: str, body: list[Any], destination: str | None = None
) -> Message:
    """A signal as the notification server sends it: to all, or to `destination`."""
    return Message(
        message_type=MessageType.SIGNAL,
        destination=destination,
        path=NOTIFICATIONS_PATH,
        interface=NOTIFICATIONS,
        member=member,
        signature=signature,
        body=body,
    )


def _owner(address: str, name: str) -> str:
    async def ask() -> str:
        bus = await MessageBus(bus_address=address).connect()
        try:
            reply = await bus.call(
                Message(
                    destination="org.freedesktop.DBus",
                    path="/org/freedesktop/DBus",
                    interface="org.freedesktop.DBus",
                    member="GetNameOwner",
                    signature="s",
                    body=[name],
                )
            )
            assert reply is not None and reply.message_type is MessageType.METHOD_RETURN
            return str(reply.body[0])
        finally:
            bus.disconnect()

    return asyncio.run(ask())


def _terminal_on(record: Path, pane: int) -> bool:
    return record.exists() and record.read_text().split("\n")[-3:] == ["attach", str(pane), ""]


def _server_says(bus: NotificationBus, member: str, signature: str, *values: Variant) -> None:
    bus.server.call("EmitSignal", "sssav", NOTIFICATIONS, member, signature, list(values))


def test_notification_actions_are_taken_from_the_server_only(
    notified: tuple[Service, Path], notification_bus: NotificationBus
) -> None:
    service, record = notified
    address = notification_bus.bus.address
    first = service.spawn(printing(r"\033]9;first\007"), title="first")
    wait_notifications(notification_bus, 1)  # the server's id 1
    second = service.spawn(printing(r"\033]9;second\007"), title="second")
    wait_notifications(notification_bus, 2)  # id 2
    muxd = _owner(address, BUS_NAME)
    # Another connection says the user clicked notification 1, to all and to muxd.
    asyncio.run(
        _forge(
            address,
            _notification_signal("ActionInvoked", "us", [1, "default"]),
            _notification_signal("ActionInvoked", "us", [1, "default"], destination=muxd),
        )
    )
    assert "ignored org.freedesktop.Notifications.ActionInvoked from :" in service.log()
    # The server's own signal opens a terminal. muxd starts terminals in the order it
    # decided to, and logs each first: had it obeyed the forged one, the log says so.
    _server_says(notification_bus, "ActionInvoked", "us", Variant("u", 2), Variant("s", "default"))
    wait_for(lambda: _terminal_on(record, second), what="a terminal on the second pane")
    assert f"opening pane {first} in a terminal" not in service.log()
    # A forged NotificationClosed does not forget notification 1 either.
    asyncio.run(
        _forge(
            address,
            _notification_signal("NotificationClosed", "uu", [1, 2]),
            _notification_signal("NotificationClosed", "uu", [1, 2], destination=muxd),
        )
    )
    _server_says(notification_bus, "ActionInvoked", "us", Variant("u", 1), Variant("s", "default"))
    wait_for(lambda: _terminal_on(record, first), what="a terminal on the first pane")


def test_notification_text_shows_control_characters_as_escapes(
    notified: tuple[Service, Path], notification_bus: NotificationBus
) -> None:
    """A program's text reaches the desktop with ESC, C1 and bidi controls visible."""
    service, _ = notified
    title = base64.b64encode("Build \u202eexe.txt\x9b".encode()).decode()
    body = base64.b64encode("done\x1b]52;c;SGk=\x07 <b>\u202eok".encode()).decode()
    service.spawn(printing(rf"\033]99;e=1:p=title;{title}\007"), title="one")
    (titled,) = wait_notifications(notification_bus, 1)
    assert titled["summary"] == "Build \\u202eexe.txt\\x9b"
    service.spawn(printing(rf"\033]99;e=1:p=body;{body}\007"), title="t\u202ewo")
    told = wait_notifications(notification_bus, 2)[1]
    assert told["summary"] == "t\\u202ewo"
    lines = str(told["body"]).split("\n")
    assert lines[0] == "done\\x1b]52;c;SGk=\\x07 &lt;b&gt;\\u202eok", "escaped, markup too"
    assert lines[1].endswith(": t\\u202ewo")


# -- logind --------------------------------------------------------------------------------------


def _unique_name_of(address: str, pid: int) -> str:
    """The unique name of the connection process `pid` holds on the bus at `address`."""

    async def ask() -> str:
        bus = await MessageBus(bus_address=address).connect()
        try:
            (names,) = (await _daemon(bus, "ListNames")).body
            for name in names:
                if name.startswith(":"):
                    reply = await _daemon(bus, "GetConnectionUnixProcessID", "s", name)
                    if reply.message_type is MessageType.METHOD_RETURN and reply.body[0] == pid:
                        return str(name)
            raise AssertionError(f"process {pid} has no connection on {address}")
        finally:
            bus.disconnect()

    return asyncio.run(ask())


async def _daemon(bus: MessageBus, member: str, signature: str = "", *body: Any) -> Message:
    reply = await bus.call(
        Message(
            destination="org.freedesktop.DBus",
            path="/org/freedesktop/DBus",
            interface="org.freedesktop.DBus",
            member=member,
            signature=signature,
            body=list(body),
        )
    )
    assert reply is not None
    return reply


async def _forge_to(address: str, destination: str, signal: Message) -> None:
    """`signal` sent to `destination` from a connection that is not logind, then a
    call to it: any reply comes after `destination` has read the signal."""
    bus = await MessageBus(bus_address=address).connect()
    try:
        await bus.send(signal)
        ping = Message(
            destination=destination,
            path="/",
            interface="org.freedesktop.DBus.Peer",
            member="Ping",
        )
        assert await bus.call(ping) is not None
    finally:
        bus.disconnect()


def test_prepare_for_sleep_is_taken_from_logind_only(
    tmp_path: Path,
    logind: MockProcess,  # noqa: F811
) -> None:
    root = tmp_path / "mux"
    root.mkdir()
    service = Service(root, bus_address=None, extra_env={"DBUS_SYSTEM_BUS_ADDRESS": logind.address})
    service.start()
    try:
        wait_for(lambda: inhibitors(logind), what="the delay inhibitor")
        assert service.process is not None
        muxd = _unique_name_of(logind.address, service.process.pid)
        forged = Message(
            message_type=MessageType.SIGNAL,
            destination=muxd,
            path="/org/freedesktop/login1",
            interface=MANAGER,
            member="PrepareForSleep",
            signature="b",
            body=[True],
        )
        asyncio.run(_forge_to(logind.address, muxd, forged))
        assert "ignored org.freedesktop.login1.Manager.PrepareForSleep from :" in service.log()
        assert inhibitors(logind), "the inhibitor is still held"
        assert "taken before suspend;" not in service.log()
        # logind's own still works.
        emit(logind, "PrepareForSleep", True)
        wait_for(lambda: not inhibitors(logind), what="the inhibitor to be released")
        assert service.log().count("taken before suspend;") == 1
    finally:
        service.stop()
