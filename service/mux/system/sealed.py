"""Sealing a pane's saved contents: compressed, then encrypted and authenticated.

A sealed blob is

    MAGIC (8 bytes) · FORMAT (1 byte) · nonce (12 bytes) · ChaCha20-Poly1305(zstd frame) · tag (16)

The AEAD is `cryptography`'s ChaCha20-Poly1305 (constant time without AES instructions).
Its associated data is the header followed by what the caller names the blob for (the
pane's launch identity, its `invocation`): a file moved to another pane, or given another
header, does not open. The header's length is fixed, so the two never run together.

Each blob gets a fresh random 96-bit nonce. Random nonces stay safe far beyond what mux
writes: below 2**32 blobs under one key a repeat has a chance under 2**-32, and at one
thousand saves a minute that is eight years (`muxctl forget-contents` starts a new key).

Compression comes first (ciphertext does not compress): one zstd frame at level 3, which
on 2,000 lines of coloured terminal output was both smaller and ~6 times faster than zlib
at its default level (figures in docs/contents.md). Opening never expands more than the
caller's `max_bytes`: the frame's declared size is checked before decompressing, and the
output is read in bounded steps whatever the frame declares.

No I/O here: the caller reads and writes the files (mux.system.durable) and finds the key
(mux.system.contents_key).
"""

import enum
import os

import zstandard
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

MAGIC = b"MUXSEAL\n"
FORMAT = 1
KEY_BYTES = 32
NONCE_BYTES = 12
TAG_BYTES = 16
HEADER = MAGIC + bytes([FORMAT])
OVERHEAD = len(HEADER) + NONCE_BYTES + TAG_BYTES  # bytes a sealed blob adds to its frame
COMPRESSION_LEVEL = 3
_READ_STEP = 1024 * 1024  # decompressed bytes produced at a time


class SealProblem(enum.StrEnum):
    """Why a blob did not open (stable names, for a problem list)."""

    NOT_SEALED = "not-sealed"
    UNKNOWN_FORMAT = "unknown-format"
    TRUNCATED = "truncated"
    DOES_NOT_OPEN = "does-not-open"
    TOO_LARGE = "too-large"
    DAMAGED = "damaged"


class SealError(ValueError):
    """The blob cannot be opened; `problem` says why, the message says it in words."""

    def __init__(self, problem: SealProblem, message: str) -> None:
        super().__init__(message)
        self.problem = problem


def generate_key() -> bytes:
    """A new random key of KEY_BYTES bytes."""
    return ChaCha20Poly1305.generate_key()


def check_key(key: object) -> bytes:
    """`key` if it is a key (bytes of KEY_BYTES); ValueError naming what is wrong."""
    if not isinstance(key, bytes):
        raise ValueError(f"a contents key is bytes, not {type(key).__name__}")
    if len(key) != KEY_BYTES:
        raise ValueError(f"a contents key has {KEY_BYTES} bytes, this one has {len(key)}")
    return key


def seal(key: bytes, plaintext: bytes, associated_data: bytes) -> bytes:
    """`plaintext` compressed and encrypted under `key`, bound to `associated_data`."""
    aead = ChaCha20Poly1305(check_key(key))
    frame = zstandard.ZstdCompressor(level=COMPRESSION_LEVEL, write_content_size=True).compress(
        plaintext
    )
    nonce = os.urandom(NONCE_BYTES)
    return HEADER + nonce + aead.encrypt(nonce, frame, HEADER + associated_data)


def open_sealed(key: bytes, blob: bytes, associated_data: bytes, *, max_bytes: int) -> bytes:
    """The plaintext `seal` was given, at most `max_bytes` of it; SealError otherwise."""
    if max_bytes < 0:
        raise ValueError(f"max_bytes must not be negative, got {max_bytes}")
    aead = ChaCha20Poly1305(check_key(key))
    _check_header(blob)
    if len(blob) < OVERHEAD:
        raise SealError(SealProblem.TRUNCATED, "the sealed contents are cut short")
    nonce = blob[len(HEADER) : len(HEADER) + NONCE_BYTES]
    try:
        frame = aead.decrypt(nonce, blob[len(HEADER) + NONCE_BYTES :], HEADER + associated_data)
    except InvalidTag:
        raise SealError(
            SealProblem.DOES_NOT_OPEN,
            "the sealed contents do not open: sealed with another key, for another pane, "
            "or altered or cut short since",
        ) from None
    return _decompress(frame, max_bytes)


def _check_header(blob: bytes) -> None:
    if not blob.startswith(MAGIC):
        if MAGIC.startswith(blob):  # the empty file, or part of the magic
            raise SealError(SealProblem.TRUNCATED, "the sealed contents are cut short")
        raise SealError(SealProblem.NOT_SEALED, "not a file of sealed mux contents")
    if len(blob) == len(MAGIC):
        raise SealError(SealProblem.TRUNCATED, "the sealed contents are cut short")
    if blob[len(MAGIC)] != FORMAT:
        raise SealError(
            SealProblem.UNKNOWN_FORMAT,
            f"sealed in format {blob[len(MAGIC)]}, and this mux reads format {FORMAT} "
            "(written by a newer mux?)",
        )


def _decompress(frame: bytes, max_bytes: int) -> bytes:
    # Only a holder of the key can have made `frame`; it is still read with bounds, so
    # that no file, whoever wrote it, can cost more memory than the caller allows.
    too_large = SealError(
        SealProblem.TOO_LARGE, f"the contents are larger than the {max_bytes} bytes allowed"
    )
    try:
        declared = zstandard.get_frame_parameters(frame).content_size
    except zstandard.ZstdError:
        raise SealError(SealProblem.DAMAGED, "the sealed contents are damaged") from None
    if declared != zstandard.CONTENTSIZE_UNKNOWN and declared > max_bytes:
        raise too_large
    if declared != zstandard.CONTENTSIZE_UNKNOWN:  # (what mux writes): one call, its size
        try:  # (a frame holding more than it declares is refused by zstd itself)
            whole = zstandard.ZstdDecompressor().decompress(frame)
        except zstandard.ZstdError:
            raise SealError(SealProblem.DAMAGED, "the sealed contents are damaged") from None
        if len(whole) != declared:
            raise SealError(SealProblem.DAMAGED, "the sealed contents are damaged")
        return whole
    output = bytearray()
    try:
        with zstandard.ZstdDecompressor().stream_reader(frame) as reader:
            while chunk := reader.read(min(_READ_STEP, max_bytes + 1 - len(output))):
                output += chunk
                if len(output) > max_bytes:
                    raise too_large
    except zstandard.ZstdError:
        raise SealError(SealProblem.DAMAGED, "the sealed contents are damaged") from None
    return bytes(output)
