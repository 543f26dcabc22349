"""Sealed pane contents: what was sealed opens with the same key and pane, and nothing
else opens: another key, another pane, any changed byte, a cut, a bomb, a newer format."""

import pytest
import zstandard
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from hypothesis import given
from hypothesis import strategies as st

from mux.system import sealed
from mux.system.sealed import SealError, SealProblem, open_sealed, seal

KEY = bytes(range(sealed.KEY_BYTES))
PANE = b"invocation 6f1c2e"
COLOURED = b"".join(
    b"\x1b[1;3%dmline %d\x1b[0m \x1b[38;5;%dmcoloured text\x1b[m\r\n" % (i % 8, i, i % 256)
    for i in range(2000)
)


def problem_of(blob: bytes, *, key: bytes = KEY, pane: bytes = PANE, limit: int = 1 << 20) -> str:
    with pytest.raises(SealError) as refused:
        open_sealed(key, blob, pane, max_bytes=limit)
    assert str(refused.value)  # always a sentence for a person
    return refused.value.problem


@given(st.binary(max_size=5000), st.binary(max_size=64))
def test_what_is_sealed_opens_with_the_same_key_and_pane(plaintext: bytes, pane: bytes) -> None:
    blob = seal(KEY, plaintext, pane)
    assert open_sealed(KEY, blob, pane, max_bytes=len(plaintext)) == plaintext


def test_coloured_terminal_text_is_compressed_and_not_readable() -> None:
    blob = seal(KEY, COLOURED, PANE)
    assert len(blob) < len(COLOURED) // 4
    assert b"coloured text" not in blob
    assert open_sealed(KEY, blob, PANE, max_bytes=len(COLOURED)) == COLOURED


def test_each_seal_has_its_own_nonce() -> None:
    assert seal(KEY, b"same", PANE) != seal(KEY, b"same", PANE)


def test_another_key_does_not_open_it() -> None:
    blob = seal(KEY, b"secret output", PANE)
    assert problem_of(blob, key=sealed.generate_key()) == SealProblem.DOES_NOT_OPEN


def test_another_panes_file_does_not_open() -> None:
    blob = seal(KEY, b"secret output", PANE)
    assert problem_of(blob, pane=b"invocation 6f1c2f") == SealProblem.DOES_NOT_OPEN
    assert problem_of(blob, pane=b"") == SealProblem.DOES_NOT_OPEN


def test_every_changed_byte_is_refused() -> None:
    blob = seal(KEY, b"a line of output\r\n" * 3, PANE)
    for position in range(len(blob)):
        for mask in (0x01, 0x80):
            changed = bytearray(blob)
            changed[position] ^= mask
            problem_of(bytes(changed))


@given(st.binary(max_size=300), st.data())
def test_any_changed_byte_is_refused(plaintext: bytes, data: st.DataObject) -> None:
    blob = seal(KEY, plaintext, PANE)
    position = data.draw(st.integers(0, len(blob) - 1), label="position")
    mask = data.draw(st.integers(1, 255), label="mask")
    changed = bytearray(blob)
    changed[position] ^= mask
    expected = {
        **dict.fromkeys(range(len(sealed.MAGIC)), SealProblem.NOT_SEALED),
        len(sealed.MAGIC): SealProblem.UNKNOWN_FORMAT,
    }.get(position, SealProblem.DOES_NOT_OPEN)
    assert problem_of(bytes(changed)) == expected


def test_every_cut_is_refused() -> None:
    blob = seal(KEY, b"a line of output\r\n", PANE)
    for length in range(len(blob)):
        assert problem_of(blob[:length]) in (SealProblem.TRUNCATED, SealProblem.DOES_NOT_OPEN)
    assert problem_of(b"") == SealProblem.TRUNCATED
    assert problem_of(blob[: sealed.OVERHEAD - 1]) == SealProblem.TRUNCATED


def test_a_file_of_something_else_is_named_as_such() -> None:
    assert problem_of(b'{"panes": []}') == SealProblem.NOT_SEALED
    assert problem_of(zstandard.ZstdCompressor().compress(b"plain")) == SealProblem.NOT_SEALED


def test_a_newer_format_is_told_apart() -> None:
    blob = bytearray(seal(KEY, b"output", PANE))
    blob[len(sealed.MAGIC)] = sealed.FORMAT + 1
    with pytest.raises(SealError, match="format 2, and this mux reads format 1") as refused:
        open_sealed(KEY, bytes(blob), PANE, max_bytes=100)
    assert refused.value.problem == SealProblem.UNKNOWN_FORMAT
    assert seal(KEY, b"", PANE).startswith(b"MUXSEAL\n\x01")


def test_a_bomb_is_refused_not_expanded() -> None:
    bomb = seal(KEY, bytes(64 * 1024 * 1024), PANE)
    assert len(bomb) < 64 * 1024
    assert problem_of(bomb, limit=1024 * 1024) == SealProblem.TOO_LARGE


def _sealed_frame(frame: bytes) -> bytes:
    """A frame sealed as `seal` would, for frames `seal` itself never writes."""
    nonce = bytes(sealed.NONCE_BYTES)
    return sealed.HEADER + nonce + ChaCha20Poly1305(KEY).encrypt(nonce, frame, sealed.HEADER + PANE)


def test_a_bomb_that_hides_its_size_is_stopped_at_the_limit() -> None:
    compressor = zstandard.ZstdCompressor(write_content_size=False).compressobj()
    frame = compressor.compress(bytes(64 * 1024 * 1024)) + compressor.flush()
    assert problem_of(_sealed_frame(frame), limit=1024 * 1024) == SealProblem.TOO_LARGE
    assert open_sealed(KEY, _sealed_frame(frame), PANE, max_bytes=64 * 1024 * 1024) == bytes(
        64 * 1024 * 1024
    )


def test_the_limit_is_exact() -> None:
    blob = seal(KEY, b"x" * 100, PANE)
    assert open_sealed(KEY, blob, PANE, max_bytes=100) == b"x" * 100
    assert problem_of(blob, limit=99) == SealProblem.TOO_LARGE


def test_damaged_compressed_contents_are_refused() -> None:
    frame = zstandard.ZstdCompressor().compress(COLOURED)
    assert problem_of(_sealed_frame(frame[:-10])) == SealProblem.DAMAGED
    assert problem_of(_sealed_frame(b"not zstd at all")) == SealProblem.DAMAGED


def test_keys_are_checked() -> None:
    assert len(sealed.generate_key()) == sealed.KEY_BYTES
    assert sealed.generate_key() != sealed.generate_key()
    assert sealed.check_key(KEY) == KEY
    with pytest.raises(ValueError, match="has 32 bytes, this one has 16"):
        seal(bytes(16), b"", PANE)
    with pytest.raises(ValueError, match="is bytes, not str"):
        sealed.check_key("0" * 32)
    with pytest.raises(ValueError, match="must not be negative"):
        open_sealed(KEY, seal(KEY, b"", PANE), PANE, max_bytes=-1)
