"""The attach protocol codec (docs/attach-protocol.md#frames): round trips, any split, garbage
never escapes."""

import json
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mux.protocol.attach import (
    MAX_PAYLOAD,
    Attach,
    Attached,
    Detach,
    Detached,
    Error,
    Exited,
    Frame,
    FrameDecoder,
    Hello,
    Input,
    Output,
    Paste,
    ProtocolError,
    Repaint,
    Resize,
    Status,
    Welcome,
    encode,
)

u16 = st.integers(min_value=0, max_value=0xFFFF)
frames = st.one_of(
    st.builds(
        Hello,
        st.integers(min_value=0, max_value=1000),
        st.none() | st.integers(min_value=0, max_value=1 << 20),
        st.booleans(),
        st.booleans(),
    ),
    st.builds(
        Welcome,
        st.integers(min_value=0, max_value=1000),
        st.booleans(),
        st.booleans(),
        st.booleans(),
    ),
    st.builds(Status, st.binary(max_size=300)),
    st.builds(Attach, st.integers(min_value=0, max_value=(1 << 64) - 1)),
    st.builds(Input, st.binary(max_size=300)),
    st.builds(Paste, st.binary(max_size=300)),
    st.builds(Output, st.binary(max_size=300)),
    st.builds(Repaint, st.binary(max_size=300)),
    st.builds(Resize, u16, u16),
    st.builds(Attached, st.integers(min_value=0, max_value=(1 << 64) - 1), u16, u16),
    st.builds(Exited, st.integers(min_value=-(1 << 31), max_value=(1 << 31) - 1)),
    st.builds(Error, st.text(max_size=20), st.text(max_size=50)),
    st.just(Detach()),
    st.just(Detached()),
)


def _decode_all(chunks: list[bytes]) -> list[Frame]:
    decoder = FrameDecoder()
    out: list[Frame] = []
    for chunk in chunks:
        decoder.receive_data(chunk)
        while (frame := decoder.next_frame()) is not None:
            out.append(frame)
    return out


@given(st.lists(frames, max_size=10), st.lists(st.integers(min_value=0, max_value=4000)))
def test_any_split_of_any_frames_decodes_to_the_same_frames(
    sent: list[Frame], cuts: list[int]
) -> None:
    stream = b"".join(encode(frame) for frame in sent)
    points = sorted({c % (len(stream) + 1) for c in cuts})
    chunks = [stream[a:b] for a, b in zip([0, *points], [*points, len(stream)], strict=True)]
    assert _decode_all(chunks) == sent


@given(st.binary(max_size=200))
def test_garbage_only_ever_raises_protocol_error(data: bytes) -> None:
    decoder = FrameDecoder()
    decoder.receive_data(data)
    try:
        while decoder.next_frame() is not None:
            pass
    except ProtocolError:
        pass


def test_an_oversized_frame_is_refused_before_it_is_buffered() -> None:
    decoder = FrameDecoder()
    decoder.receive_data(struct.pack(">BI", 0x03, MAX_PAYLOAD + 1))
    with pytest.raises(ProtocolError, match="larger than"):
        decoder.next_frame()


def _json_frame(kind: int, value: object) -> bytes:
    payload = json.dumps(value).encode()
    return bytes([kind]) + len(payload).to_bytes(4, "big") + payload


def test_keys_a_side_does_not_know_are_ignored() -> None:
    decoder = FrameDecoder()
    decoder.receive_data(_json_frame(0x01, {"version": 1, "colour": "blue"}))
    decoder.receive_data(_json_frame(0x81, {"version": 1}))
    assert decoder.next_frame() == Hello(1, None)
    assert decoder.next_frame() == Welcome(1, terminal=False, paste=False)  # (a muxd before PASTE)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"\x7f\x00\x00\x00\x00", "unknown frame type 0x7f"),
        (b"\x02\x00\x00\x00\x01x", "8-byte pane id"),
        (b"\x01\x00\x00\x00\x02[]", "not a JSON object"),
        (b"\x05\x00\x00\x00\x01x", "no payload"),
        (_json_frame(0x01, {"version": 1, "terminal_fd": -1}), "descriptor number"),
        (_json_frame(0x01, {"version": 1, "terminal_fd": "1"}), "descriptor number"),
        (_json_frame(0x01, {"version": 1, "terminal_fd": True}), "descriptor number"),
        (_json_frame(0x81, {"version": 1, "terminal": 1}), "true or false"),
        (_json_frame(0x81, {"terminal": True}), "version must be"),
        (_json_frame(0x01, {"version": 1, "status": "yes"}), "true or false"),
        (_json_frame(0x81, {"version": 1, "status": 1}), "true or false"),
        (b"\x07\x00\x01\x00\x00", "larger than 16384"),
    ],
)
def test_malformed_frames_name_the_problem(raw: bytes, message: str) -> None:
    decoder = FrameDecoder()
    decoder.receive_data(raw)
    with pytest.raises(ProtocolError, match=message):
        decoder.next_frame()
