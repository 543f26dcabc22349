"""The attach and resurrection decoders fed hostile byte streams.

Pure: the sans-I/O decoders (mux.protocol.attach, attach_conversation, resurrection) only
ever return what they document or raise the protocol's own error (ProtocolError, which
muxd answers with an ERROR frame; Violation, answered with its code; Refused on a client),
never anything else. Through real sockets: the same streams sent to a running muxd's attach
socket and to a pane's resurrection endpoint leave muxd answering, with no traceback in its
log. The streams: random bytes, frames and lines with mutated lengths and payloads, JSON
nested deep, numbers too long to convert, valid conversations with garbage after them.
"""

from __future__ import annotations

import itertools
import json
import socket
import time
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from dbus_fast import Message, MessageType, Variant
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mux.protocol import attach as frames
from mux.protocol import resurrection as ar
from mux.protocol.attach_conversation import (
    ClientConversation,
    ClientFrame,
    ServiceConversation,
)
from tests.fuzz.conftest import FIGURES, FuzzBus, LogWatch, examples, time_limit
from tests.harness import DEFAULT_TIMEOUT, Service, resurrection_endpoint

# What a client may send, as the conversation declares it (STATUS, added for the status
# line, was missing from a copy of this list here).
CLIENT_FRAMES = typing.get_args(ClientFrame)
HUGE_NUMBER = "9" * 5000  # past Python's 4300-digit limit on int(str)
DEEPEST = 60_000  # characters of nested JSON


def _deep(opener: str, closer: str, limit: int) -> st.SearchStrategy[str]:
    # Python's JSON decoder recurses: a few thousand levels are as many as a million.
    longest = min(limit, DEEPEST) // (len(opener) + len(closer))
    return st.integers(1, longest).map(lambda n: opener * n + closer * n)


def hostile_json(limit: int) -> st.SearchStrategy[str]:
    """JSON text (or nearly) a decoder must refuse or take, never crash on."""
    value = st.one_of(
        _deep("[", "]", limit // 2),
        _deep('{"a":', "}", limit // 2),
        st.sampled_from(
            [HUGE_NUMBER, "-" + HUGE_NUMBER, "1e999", "-1e999", "NaN", "Infinity", "1.5", "-1"]
        ),
        st.sampled_from(["true", "null", '""', '"\\ud800"', "[1,2", "{", "\x00", "\ufeff1"]),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
            lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
            max_leaves=8,
        ).map(json.dumps),
    )
    # The value alone, or where the decoder looks: a field of the object it expects.
    return value.flatmap(
        lambda v: st.sampled_from(
            [
                v,
                f'{{"version":{v}}}',
                f'{{"version":1,"terminal_fd":{v}}}',
                f'{{"version":1,"other":{v}}}',
                f'{{"protocol":"application-resurrection/1","hello":{v}}}',
                f'{{"protocol":"application-resurrection/1","hello":{{"application":{v}}}}}',
                f'{{"checkpoint":{{"reference":{v}}}}}',
                f'{{"clear":{v}}}',
                f'{{"protocol":"application-resurrection/1","restore":{{"reference":{v}}}}}',
                f'{{"protocol":"application-resurrection/1","error":{{"code":{v}}}}}',
                f'{{"checkpointed":{{"generation":{v}}}}}',
                f'{{"code":{v},"message":"m"}}',
                f'{{"version":1,"terminal":{v}}}',
            ]
        )
    )


KINDS = st.sampled_from([int(k) for k in frames.FrameType]) | st.integers(0, 255)
PAYLOADS = st.one_of(
    st.binary(max_size=64),
    hostile_json(frames.MAX_PAYLOAD).map(str.encode),
    st.sampled_from([frames.Hello().payload(), frames.Welcome().payload(), b""]),
    st.integers(0, (1 << 64) - 1).map(lambda n: n.to_bytes(8, "big")),  # an ATTACH's pane id
    st.binary(min_size=4, max_size=4),  # a RESIZE
)


@st.composite
def attach_frame(draw: st.DrawFn) -> bytes:
    """One frame, its length often not its payload's."""
    kind, payload = draw(KINDS), draw(PAYLOADS)
    length = draw(
        st.one_of(
            st.just(len(payload)),
            st.just(len(payload)),
            st.integers(0, len(payload) + 8),
            st.sampled_from([frames.MAX_PAYLOAD, frames.MAX_PAYLOAD + 1, (1 << 32) - 1]),
        )
    )
    return frames.HEADER.pack(kind, length) + payload


def json_frames(*kinds: frames.FrameType) -> st.SearchStrategy[bytes]:
    """A frame of one of `kinds` with a well-framed hostile JSON payload."""
    return st.tuples(st.sampled_from(kinds), hostile_json(frames.MAX_PAYLOAD)).map(
        lambda kp: frames.HEADER.pack(kp[0], len(kp[1].encode())) + kp[1].encode()
    )


def attach_streams(panes: tuple[int, ...] = (1,)) -> st.SearchStrategy[bytes]:
    """What a client could send: garbage, a hostile HELLO, or frames, often after a proper
    HELLO (and ATTACH)."""
    hello = frames.encode(frames.Hello())
    attach = st.sampled_from(panes).map(lambda p: frames.encode(frames.Attach(p)))
    opening = st.sampled_from([b"", hello]) | attach.map(lambda a: hello + a)
    body = st.lists(attach_frame(), max_size=5).map(b"".join)
    return st.one_of(
        st.binary(max_size=512),
        json_frames(frames.FrameType.HELLO),
        st.tuples(opening, body, st.binary(max_size=16)).map(b"".join),
    )


def service_streams() -> st.SearchStrategy[bytes]:
    """What a fake or broken service could send a client that said HELLO and ATTACH."""
    hostile = json_frames(frames.FrameType.WELCOME, frames.FrameType.ERROR)
    return st.lists(attach_frame() | hostile, max_size=6).map(b"".join)


def resurrection_streams() -> st.SearchStrategy[bytes]:
    """What a peer could send an endpoint: garbage, or lines, often after a proper hello."""
    hello = ar.hello("fuzz")
    line = st.one_of(
        hostile_json(ar.MAX_LINE).map(lambda text: text.encode() + b"\n"),
        st.binary(max_size=64).map(lambda b: b.replace(b"\n", b"") + b"\n"),
        st.sampled_from([ar.checkpoint_request("ref"), ar.clear_request(), hello, b"\n"]),
        st.integers(ar.MAX_LINE - 2, ar.MAX_LINE + 2).map(lambda n: b"a" * n + b"\n"),
    )
    lines = st.lists(line, max_size=5).map(b"".join)
    return st.one_of(
        st.binary(max_size=512),
        st.tuples(st.sampled_from([b"", hello]), lines, st.binary(max_size=16)).map(b"".join),
    )


@st.composite
def split(draw: st.DrawFn, stream: bytes) -> list[bytes]:
    """`stream` in the pieces a socket might deliver it in."""
    cuts = sorted(draw(st.lists(st.integers(0, len(stream)), max_size=4)))
    bounds = [0, *cuts, len(stream)]
    return [stream[a:b] for a, b in itertools.pairwise(bounds)]


PURE = settings(
    max_examples=examples("decoder"),
    deadline=None,
    derandomize=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@time_limit("decoder")
@PURE
@given(data=st.data())
def test_the_frame_decoder_gives_frames_or_a_protocol_error(data: st.DataObject) -> None:
    decoder = frames.FrameDecoder()
    for chunk in data.draw(attach_streams().flatmap(split)):
        decoder.receive_data(chunk)
        try:
            while (frame := decoder.next_frame()) is not None:
                assert isinstance(frame, frames.Frame)
        except frames.ProtocolError:
            return  # the connection is answered with ERROR and closed


@time_limit("decoder")
@PURE
@given(data=st.data(), opened_attached=st.booleans())
def test_the_service_conversation_gives_client_frames_or_a_protocol_error(
    data: st.DataObject, opened_attached: bool
) -> None:
    conversation = ServiceConversation(opened_attached)
    for chunk in data.draw(attach_streams().flatmap(split)):
        conversation.receive_data(chunk)
        try:
            while (event := conversation.next_event()) is not None:
                assert isinstance(event, CLIENT_FRAMES)
        except frames.ProtocolError:
            return


@time_limit("decoder")
@PURE
@given(data=st.data())
def test_the_client_conversation_gives_service_frames_or_a_protocol_error(
    data: st.DataObject,
) -> None:
    """A client reading whatever owns the socket: a fake or broken service."""
    conversation = ClientConversation()
    conversation.send(frames.Hello())
    conversation.send(frames.Attach(1))
    for chunk in data.draw(service_streams().flatmap(split)):
        conversation.receive_data(chunk)
        try:
            while (event := conversation.next_event()) is not None:
                assert isinstance(event, frames.Frame)
        except frames.ProtocolError:
            return


@time_limit("decoder")
@PURE
@given(data=st.data())
def test_the_resurrection_host_gives_requests_or_a_violation(data: st.DataObject) -> None:
    decoder = ar.LineDecoder()
    said_hello = False
    try:
        for chunk in data.draw(resurrection_streams().flatmap(split)):
            decoder.receive_data(chunk)
            while (line := decoder.next_line()) is not None:
                if not said_hello:
                    assert isinstance(ar.parse_hello(line), str)
                    said_hello = True
                else:
                    assert isinstance(ar.parse_request(line), ar.Checkpoint | ar.Clear)
    except ar.Violation as violation:
        assert isinstance(violation.code, ar.ErrorCode)


@time_limit("decoder")
@PURE
@given(line=hostile_json(ar.MAX_LINE).map(str.encode) | st.binary(max_size=256))
def test_the_resurrection_client_takes_answers_or_refuses(line: bytes) -> None:
    """The library's side, reading what a fake or broken host answers."""
    for parse in (
        ar.parse_offer,
        lambda answer: ar.parse_acknowledgement(answer, "checkpointed"),
        lambda answer: ar.parse_acknowledgement(answer, "cleared"),
    ):
        try:
            parse(line)
        except ar.Refused as refused:
            assert isinstance(refused.code, str)


# -- through real sockets ---------------------------------------------------------------


@dataclass
class Target:
    """The fuzzed muxd, a live pane of it, and where its log was read up to."""

    service: Service
    bus: FuzzBus
    log: LogWatch
    pane: int  # a live pane, running cat
    endpoint: Path  # its resurrection endpoint

    def __repr__(self) -> str:
        return "<the fuzzed muxd>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # how hypothesis prints it
        printer.text(repr(self))

    def live_pane(self) -> None:
        """A pane running cat, with its endpoint: again, if the last stream ended it (an
        INPUT of ^D or ^C to the pane it attached to)."""
        (entries,) = _manager(self.bus, "ListPanes")
        states = {entry["id"].value: entry["state"].value for entry in entries}
        if states.get(self.pane) == "running":
            return
        if self.pane in states:
            _manager(self.bus, "Kill", "t", [self.pane])
        options = {"argv": Variant("as", ["/bin/cat"])}
        pane = _manager(self.bus, "Spawn", "a{sv}", [options])[0]
        (entries,) = _manager(self.bus, "ListPanes")
        (pid,) = (entry["pid"].value for entry in entries if entry["id"].value == pane)
        # Both or neither: a pane kept without its endpoint fails every later example.
        self.endpoint = resurrection_endpoint(pid)
        self.pane = pane

    def check(self, stream: bytes) -> None:
        """muxd runs, answers on the bus, and logged no traceback for `stream`."""
        assert self.service.process is not None
        assert self.service.process.poll() is None, f"muxd exited after {stream[:300]!r}"
        _manager(self.bus, "ListPanes")
        faults = self.log.new_faults()
        assert not faults, f"muxd's log after {stream[:300]!r}:\n{faults[-6000:]}"


@pytest.fixture(scope="module")
def target(fuzz_service: Service, fuzz_bus: FuzzBus) -> Iterator[Target]:
    yield Target(fuzz_service, fuzz_bus, LogWatch(fuzz_service), 0, Path())


def _manager(bus: FuzzBus, member: str, signature: str = "", body: list[Any] | None = None) -> Any:
    reply = bus.call(
        Message(
            destination="org.mux.Mux1",
            path="/org/mux/Mux1",
            interface="org.mux.Mux1.Manager",
            member=member,
            signature=signature,
            body=body or [],
        )
    )
    assert reply.message_type is MessageType.METHOD_RETURN, (member, reply.body)
    return reply.body


def send_and_hang_up(path: Path, stream: bytes) -> None:
    """Connect, send `stream` (as much as the server reads), say end of stream, and read
    until the server closes. A server that has not closed by the deadline is left: this
    test is about what muxd does with the bytes, not when it closes."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(path))
        sock.settimeout(DEFAULT_TIMEOUT)
        try:
            sock.sendall(stream)
            sock.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            return  # the server closed first: it read what it needed to refuse the stream
        deadline = time.monotonic() + DEFAULT_TIMEOUT
        while time.monotonic() < deadline:
            try:
                if not sock.recv(1 << 16):
                    return
            except ConnectionResetError:
                return
            except TimeoutError:
                break
        FIGURES["connections muxd had not closed after the client's end of stream"] += 1


SOCKETS = settings(
    max_examples=examples("socket"),
    deadline=None,
    derandomize=False,
    suppress_health_check=list(HealthCheck),
)


@time_limit("socket")
@SOCKETS
@given(data=st.data())
def test_attach_socket_survives_hostile_streams(target: Target, data: st.DataObject) -> None:
    target.live_pane()
    stream = data.draw(attach_streams((target.pane, 0, 1 << 63)), label="stream")
    FIGURES["attach socket streams"] += 1
    send_and_hang_up(target.service.runtime / "mux.sock", stream)
    target.check(stream)


@time_limit("socket")
@SOCKETS
@given(data=st.data())
def test_resurrection_endpoint_survives_hostile_streams(
    target: Target, data: st.DataObject
) -> None:
    target.live_pane()
    stream = data.draw(resurrection_streams(), label="stream")
    FIGURES["resurrection endpoint streams"] += 1
    send_and_hang_up(target.endpoint, stream)
    target.check(stream)
