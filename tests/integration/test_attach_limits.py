"""Bounded work on the attach socket and in the decoders, against a real muxd over a real
Unix socket: a deadline for HELLO, a cap on connections that have not said it, a small
bound on a HELLO's size, and an ERROR (never an exception in muxd) for every malformed
HELLO; the same malformed shapes on an application-resurrection endpoint
(docs/attach-protocol.md#limits, docs/resurrection-protocol.md#messages)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from mux.protocol import attach as proto
from tests.attach_client import ProtocolClient
from tests.harness import Service, assert_answers
from tests.integration.test_resurrection import code_of, endpoint_of, exchange

# What asyncio logs when an exception escapes a protocol's data_received, and what any
# exception that reached the loop leaves in the log.
CRASH_MARKS = ("Fatal error", "Traceback", "exception was never retrieved")


def connect(service: Service) -> ProtocolClient:
    return ProtocolClient.connect(service.runtime / "mux.sock")


def assert_no_crash(service: Service) -> None:
    log = service.log()
    for mark in CRASH_MARKS:
        assert mark not in log, f"muxd's log has {mark!r}:\n{log[-3000:]}"
    assert_answers(service)


def refused_with(client: ProtocolClient, code: str) -> proto.Error:
    """The ERROR the service ends the connection with; it must then close it."""
    error = client.wait_for(proto.Error)
    assert error.code == code, error
    assert "/" not in error.message, error  # no private path
    client.wait_closed()
    return error


def test_connections_that_have_not_said_hello_are_capped(
    make_service: Callable[[str], Service],
) -> None:
    # A deadline far away: only the cap may close anything here.
    service = make_service("attach_hello_seconds = 300\n")
    silent = [connect(service) for _ in range(64)]
    # Every one of them is accepted and waits (the service has taken them all in
    # once a 65th is refused: connections are accepted in order).
    extra = connect(service)
    error = refused_with(extra, "LimitExceeded")
    assert "64" in error.message and "attach_max_pending" in error.message
    # One that says HELLO makes room for one more.
    silent[0].send(proto.Hello())
    silent[0].wait_for(proto.Welcome)
    late = connect(service)
    late.send(proto.Hello())
    late.wait_for(proto.Welcome)
    # The ones kept waiting are still there to say HELLO.
    silent[1].send(proto.Hello())
    silent[1].wait_for(proto.Welcome)
    for client in [*silent, late]:
        client.close()
    assert_no_crash(service)


def test_a_silent_connection_is_closed_after_the_deadline(
    make_service: Callable[[str], Service],
) -> None:
    service = make_service("attach_hello_seconds = 0.5\n")
    silent = connect(service)
    error = refused_with(silent, "LimitExceeded")
    assert "HELLO" in error.message and "attach_hello_seconds" in error.message
    # Half a HELLO is no HELLO either.
    halfway = connect(service)
    halfway.sock.sendall(proto.HEADER.pack(proto.FrameType.HELLO, 40) + b'{"version"')
    refused_with(halfway, "LimitExceeded")
    # A client that says HELLO in time is not timed out once it is attached.
    pane = service.spawn(["sh", "-c", "echo ready; exec cat"])
    service.wait_screen(pane, "ready")
    attached = connect(service)
    attached.attach(pane)
    attached.send(proto.Input(b"typed\r"))
    attached.wait_until(lambda: attached.output_text().count("typed") >= 2, "the echo")
    assert not attached.closed and not any(isinstance(f, proto.Error) for f in attached.frames)
    attached.close()
    assert_no_crash(service)


def test_a_hello_declaring_a_megabyte_is_refused_before_it_is_read(service: Service) -> None:
    # Only the header is sent: the refusal cannot wait for the payload.
    client = connect(service)
    client.sock.sendall(proto.HEADER.pack(proto.FrameType.HELLO, 1 << 20))
    error = refused_with(client, "ProtocolError")
    assert "HELLO" in error.message and str(proto.MAX_HELLO) in error.message
    # Nor may anything else come first, of any size.
    client = connect(service)
    client.sock.sendall(proto.HEADER.pack(proto.FrameType.INPUT, (1 << 20) - 1))
    assert "before HELLO" in refused_with(client, "ProtocolError").message
    assert_no_crash(service)


def _hello(payload: bytes) -> bytes:
    return proto.HEADER.pack(proto.FrameType.HELLO, len(payload)) + payload


MALFORMED_HELLOS = {
    "nested 100,000 deep": b"[" * 100_000 + b"]" * 100_000,
    "nested 30,000 deep": b'{"version":' + b"[" * 30_000 + b"]" * 30_000 + b"}",
    "a 5,000-digit terminal_fd": b'{"version":1,"terminal_fd":' + b"7" * 5000 + b"}",
    "a 4,000-digit terminal_fd": b'{"version":1,"terminal_fd":' + b"7" * 4000 + b"}",
    "a 5,000-digit version": b'{"version":' + b"9" * 5000 + b"}",
    "invalid UTF-8": b'{"version":1,"x":"\xff\xfe"}',
    "UTF-16": '{"version":1}'.encode("utf-16-le"),
    "a string for a version": b'{"version":"1"}',
}


@pytest.mark.parametrize("payload", MALFORMED_HELLOS.values(), ids=MALFORMED_HELLOS.keys())
def test_a_malformed_hello_is_answered_with_an_error(service: Service, payload: bytes) -> None:
    client = connect(service)
    client.sock.sendall(_hello(payload))
    refused_with(client, "ProtocolError")
    assert_no_crash(service)


RESURRECTION_HELLO = b'{"protocol":"application-resurrection/1","hello":{"application":%s}}\n'

MALFORMED_LINES = {
    "nested 30,000 deep": RESURRECTION_HELLO % (b"[" * 30_000 + b"]" * 30_000),
    "a 5,000-digit number": RESURRECTION_HELLO % (b"7" * 5000),
    "invalid UTF-8": RESURRECTION_HELLO % b'"\xff\xfe"',
    "a lone surrogate": RESURRECTION_HELLO % b'"\\ud800"',
    "a number for a name": RESURRECTION_HELLO % b"7",
}


@pytest.mark.parametrize("line", MALFORMED_LINES.values(), ids=MALFORMED_LINES.keys())
def test_a_malformed_resurrection_hello_is_answered_with_invalid_handshake(
    service: Service, line: bytes
) -> None:
    pane = service.spawn(["sleep", "600"])
    answers = exchange(endpoint_of(service, pane), line)
    assert len(answers) == 1, answers
    assert code_of(answers[0]) == "invalid_handshake"
    assert json.loads(answers[0])["protocol"] == "application-resurrection/1"
    assert_no_crash(service)
    assert service.panes()[pane]["state"] == "running"


def test_openattach_connections_need_no_hello_and_take_no_place(
    make_service: Callable[[str], Service],
) -> None:
    """The cap counts connections on mux.sock waiting to say HELLO; OpenAttach's come
    attached already, so a full cap does not refuse them, nor does the deadline end them."""
    from jeepney import DBusAddress, new_method_call
    from jeepney.io.blocking import open_dbus_connection

    service = make_service("attach_hello_seconds = 0.5\nattach_max_pending = 2\n")
    pane = service.spawn(["sh", "-c", "echo ready; exec cat"])
    service.wait_screen(pane, "ready")
    silent = [connect(service) for _ in range(2)]
    manager = DBusAddress(
        "/org/mux/Mux1", bus_name="org.mux.Mux1", interface="org.mux.Mux1.Manager"
    )
    with open_dbus_connection(service.bus_address, enable_fds=True) as bus:
        reply = bus.send_and_get_reply(new_method_call(manager, "OpenAttach", "t", (pane,)))
        assert reply.header.message_type.name == "method_return", reply.body
        opened = ProtocolClient(reply.body[0].to_socket())
    opened.wait_for(proto.Attached)
    for client in silent:
        refused_with(client, "LimitExceeded")  # the deadline
    opened.send(proto.Input(b"still-here\r"))
    opened.wait_until(lambda: "still-here" in opened.output_text(), "the echo")
    assert not any(isinstance(f, proto.Error) for f in opened.frames), opened.kinds()
    opened.close()
    assert_no_crash(service)
