from hypothesis import given
from hypothesis import strategies as st

from mux.terminal.scrollback import Scrollback


@given(st.integers(min_value=0, max_value=64), st.lists(st.binary(max_size=40), max_size=30))
def test_keeps_exactly_the_newest_bytes(limit: int, chunks: list[bytes]) -> None:
    ring = Scrollback(limit)
    for chunk in chunks:
        ring.append(chunk)
    everything = b"".join(chunks)
    expected = everything[-limit:] if limit else b""
    assert ring.contents() == expected
    assert len(ring) == len(expected)
    assert ring.total == len(everything)
    assert ring.contents() == expected  # reading does not consume


def test_idle_ring_holds_nothing() -> None:
    assert Scrollback(1 << 20).contents() == b""
