"""Every malformed frame or line is the protocol's error, never another exception: the
attach codec and conversation (ProtocolError, answered with ERROR `ProtocolError`) and
application-resurrection/1 (Violation on the host side, Refused on the client side).
Nesting deeper than the parser goes, integers longer than Python converts, bytes that
are not UTF-8, strings that are not text (lone surrogates) and values of the wrong type;
and the bounds a frame's header is held to before its payload is waited for."""

import contextlib
import json
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mux.protocol import attach as proto
from mux.protocol import resurrection as ar
from mux.protocol.attach_conversation import ClientConversation, ServiceConversation

# Any JSON value, as Python builds them (strings with lone surrogates included: JSON's
# \\uXXXX escapes can make them).
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(st.characters(codec=None)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def deep(depth: int, opening: bytes = b"[", closing: bytes = b"]") -> bytes:
    return opening * depth + closing * depth


def huge_int(digits: int) -> bytes:
    return b"7" * digits


HOSTILE = {
    "nested 50,000 deep": deep(50_000),
    "objects nested 20,000 deep": b'{"a":' * 20_000 + b"1" + b"}" * 20_000,
    "a 5,000-digit integer": huge_int(5000),
    "not UTF-8": b"\xff\xfe\xfd",
    "a lone surrogate": b'"\\ud800"',
    "NaN": b"NaN",
    "infinity": b"1e999",
}
hostile_values = pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE.keys())


def frame(kind: proto.FrameType, payload: bytes) -> bytes:
    return proto.HEADER.pack(kind, len(payload)) + payload


def decode_only_protocol_errors(data: bytes) -> None:
    """Decode `data` as muxd would; anything but a frame or a ProtocolError fails."""
    service = ServiceConversation()
    service.receive_data(data)
    try:
        while (event := service.next_event()) is not None:
            if isinstance(event, proto.Hello):
                service.send(proto.Welcome())
    except proto.ProtocolError:
        pass


# -- the attach protocol -------------------------------------------------------------


@hostile_values
@pytest.mark.parametrize("key", ["version", "terminal_fd", "read_only", "status", "glance"])
def test_a_hostile_value_in_hello_is_a_protocol_error(key: str, value: bytes) -> None:
    payload = b'{"version":1,"' + key.encode() + b'":' + value + b"}"
    if len(payload) > proto.MAX_HELLO:
        payload = value  # too large to be a HELLO's value: the whole payload then
    decoder = proto.FrameDecoder()
    decoder.receive_data(frame(proto.FrameType.HELLO, payload))
    with pytest.raises(proto.ProtocolError):
        decoder.next_frame()


@hostile_values
def test_a_hostile_error_from_the_service_is_a_protocol_error_for_the_client(
    value: bytes,
) -> None:
    client = ClientConversation()
    client.send(proto.Hello())
    client.receive_data(frame(proto.FrameType.ERROR, b'{"code":"X","message":' + value + b"}"))
    with pytest.raises(proto.ProtocolError):
        client.next_event()


@pytest.mark.parametrize(
    "numbers",
    [
        {"version": 1 << 31},
        {"version": -1},
        {"version": 1, "terminal_fd": 1 << 31},
        {"version": 1, "terminal_fd": 10**4000},
        {"version": 1.0},
    ],
)
def test_numbers_out_of_range_are_protocol_errors(numbers: dict[str, object]) -> None:
    decoder = proto.FrameDecoder()
    decoder.receive_data(frame(proto.FrameType.HELLO, json.dumps(numbers).encode()))
    with pytest.raises(proto.ProtocolError, match="0 to"):
        decoder.next_frame()


def test_json_in_another_encoding_than_utf8_is_a_protocol_error() -> None:
    for encoding in ("utf-16-le", "utf-16", "utf-32"):
        decoder = proto.FrameDecoder()
        decoder.receive_data(
            frame(proto.FrameType.HELLO, b'{"version":1}'.decode().encode(encoding))
        )
        with pytest.raises(proto.ProtocolError, match="not JSON"):
            decoder.next_frame()


@given(json_values)
def test_any_json_as_hello_welcome_or_error_is_a_frame_or_a_protocol_error(
    value: object,
) -> None:
    payload = json.dumps(value).encode("utf-8", "surrogatepass")
    for kind in (proto.FrameType.HELLO, proto.FrameType.WELCOME, proto.FrameType.ERROR):
        decoder = proto.FrameDecoder()
        decoder.receive_data(frame(kind, payload))
        try:
            decoded = decoder.next_frame()
        except proto.ProtocolError:
            continue
        assert decoded is not None and decoded.kind is kind


@given(
    st.integers(min_value=900, max_value=proto.MAX_HELLO // 2 - 16),
    st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]),
)
def test_nesting_at_any_depth_is_a_frame_or_a_protocol_error(
    depth: int, brackets: tuple[bytes, bytes]
) -> None:
    opening, closing = brackets
    inner = opening * depth + b"1" + closing * depth
    if len(inner) + 16 > proto.MAX_HELLO:
        inner = inner[: proto.MAX_HELLO - 16]
    decode_only_protocol_errors(frame(proto.FrameType.HELLO, b'{"version":1,"x":' + inner + b"}"))


@given(st.binary(max_size=400), st.sampled_from(list(proto.FrameType)))
def test_any_payload_of_any_type_is_a_frame_or_a_protocol_error(
    payload: bytes, kind: proto.FrameType
) -> None:
    decode_only_protocol_errors(
        frame(proto.FrameType.HELLO, b'{"version":1}') + frame(kind, payload)
    )


def test_a_hello_larger_than_its_bound_is_refused_from_its_header() -> None:
    service = ServiceConversation()
    service.receive_data(proto.HEADER.pack(proto.FrameType.HELLO, proto.MAX_HELLO + 1))
    with pytest.raises(proto.ProtocolError, match=f"HELLO of {proto.MAX_HELLO + 1} bytes"):
        service.next_event()
    # A HELLO as large as the bound is read (and its keys ignored).
    padding = b" " * (proto.MAX_HELLO - len(b'{"version":1}'))
    service = ServiceConversation()
    service.receive_data(frame(proto.FrameType.HELLO, b'{"version":1}' + padding))
    assert service.next_event() == proto.Hello()


@pytest.mark.parametrize(
    "kind",
    [k for k in proto.FrameType if k is not proto.FrameType.HELLO],
)
def test_nothing_but_hello_is_waited_for_before_hello(kind: proto.FrameType) -> None:
    service = ServiceConversation()
    service.receive_data(struct.pack(">BI", kind, 8))  # the header alone
    # (a frame of a fixed shape may be refused for its length first)
    with pytest.raises(proto.ProtocolError, match=f"^{kind.name} (before HELLO|carries)"):
        service.next_event()


@pytest.mark.parametrize(
    ("kind", "length"),
    [
        (proto.FrameType.ATTACH, 9),
        (proto.FrameType.RESIZE, 1 << 20),
        (proto.FrameType.DETACH, 1),
        (proto.FrameType.WELCOME, proto.MAX_HELLO + 1),
    ],
)
def test_a_frame_of_a_fixed_or_small_shape_declaring_more_is_refused_from_its_header(
    kind: proto.FrameType, length: int
) -> None:
    decoder = proto.FrameDecoder()
    decoder.receive_data(struct.pack(">BI", kind, length))
    with pytest.raises(proto.ProtocolError):
        decoder.next_kind()


# -- application-resurrection/1 --------------------------------------------------------


def hello_line(application: bytes) -> bytes:
    return b'{"protocol":"application-resurrection/1","hello":{"application":' + application + b"}}"


@hostile_values
def test_a_hostile_hello_is_invalid_handshake(value: bytes) -> None:
    with pytest.raises(ar.Violation) as violation:
        ar.parse_hello(hello_line(value))
    assert violation.value.code is ar.ErrorCode.INVALID_HANDSHAKE


@hostile_values
def test_a_hostile_request_is_invalid_handshake(value: bytes) -> None:
    with pytest.raises(ar.Violation) as violation:
        ar.parse_request(b'{"checkpoint":{"reference":' + value + b"}}")
    assert violation.value.code is ar.ErrorCode.INVALID_HANDSHAKE


@hostile_values
def test_a_hostile_answer_is_refused_by_the_client(value: bytes) -> None:
    with pytest.raises(ar.Refused):
        ar.parse_offer(
            b'{"protocol":"application-resurrection/1","restore":{"reference":' + value + b"}}"
        )
    with pytest.raises(ar.Refused):
        ar.parse_acknowledgement(b'{"checkpointed":{"generation":' + value + b"}}", "checkpointed")


@given(
    st.binary(max_size=300)
    | json_values.map(lambda v: json.dumps(v).encode("utf-8", "surrogatepass"))
)
def test_any_line_is_a_message_or_the_protocol_error(line: bytes) -> None:
    for parse in (ar.parse_hello, ar.parse_request):
        with contextlib.suppress(ar.Violation):
            parse(line)
    with contextlib.suppress(ar.Refused):
        ar.parse_offer(line)
    for expected in ("checkpointed", "cleared"):
        with contextlib.suppress(ar.Refused):
            ar.parse_acknowledgement(line, expected)


@given(st.text(st.characters(codec=None), min_size=1, max_size=50))
def test_a_name_or_reference_that_is_accepted_can_be_written_as_utf8(text: str) -> None:
    encoded = json.dumps(text).encode()
    try:
        application = ar.parse_hello(hello_line(encoded))
    except ar.Violation:
        application = None
    if application is not None:
        application.encode("utf-8")
    try:
        request = ar.parse_request(b'{"checkpoint":{"reference":' + encoded + b"}}")
    except ar.Violation:
        return
    assert isinstance(request, ar.Checkpoint)
    request.reference.encode("utf-8")
