"""Hypothesis strategies for D-Bus values of any signature (y b n q i u x t d s o g h a ( ) a{ } v,
nested), in the shapes dbus-fast marshals: int, bool, float, str, bytes for `ay`, list for
arrays and structs, dict for dictionaries, Variant for `v`.

Every value is one the D-Bus specification allows (a string without NUL and valid UTF-8, a
valid object path and signature, containers nested within the limits): the bus daemon drops
the connection of a sender of an invalid message, which would test the daemon, not mux.
Within those rules they are hostile: controls, bidi and non-BMP characters, integers at the
bounds of their type, NaN and infinities, long arrays and strings (bounded, so that a run's
memory is), variants nested several deep. `Hints` mixes in what makes a call reach past the
first check: ids of panes and windows that exist, words the service knows, and Spawn's and
SetWindow's option names with values of their declared type.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dbus_fast import Variant
from dbus_fast.signature import SignatureType, get_signature_tree
from hypothesis import strategies as st

INTEGER_BOUNDS: dict[str, tuple[int, int]] = {
    "y": (0, (1 << 8) - 1),
    "n": (-(1 << 15), (1 << 15) - 1),
    "q": (0, (1 << 16) - 1),
    "i": (-(1 << 31), (1 << 31) - 1),
    "u": (0, (1 << 32) - 1),
    "x": (-(1 << 63), (1 << 63) - 1),
    "t": (0, (1 << 64) - 1),
}
BASIC = "ybnqiuxtdsog"  # the types a dictionary key may have ('h' too, left out: see 'h')
# Containers nest at most this deep in a generated signature or variant: the specification
# allows 64 levels in all, and a message past that gets its sender disconnected.
MAX_DEPTH = 12
SHORT = 8  # elements of an ordinary array or dictionary
LONG_BYTES = 256 * 1024  # the longest `ay`
LONG_TEXT = 64 * 1024  # the longest string, in characters
LONG_ARRAY = 2000  # the most elements of a long array of anything else

# Characters a string may hold: anything UTF-8 can carry except NUL (D-Bus forbids it).
CHARACTERS = st.characters(codec="utf-8", exclude_characters="\x00")
NASTY_TEXT = (
    "",
    " ",
    "\x1b]0;PWNED\x07\x1b[2J",
    "\x1b]52;c;SGVsbG8=\x07",
    "\u009b31m",
    "\u202egnp.exe",
    "\U0001f600\U0010ffff",
    "\ufeff\ufffe",
    "\x7f\x01\n\r\t",
    "\u0661",  # ARABIC-INDIC DIGIT ONE: a digit to str.isdigit() and int(), not an ASCII one
    "1_0",
    " 1 ",
    "-1",
    "99999999999999999999999999",
    "../../../../etc/passwd",
    "/nonexistent/mux-fuzz",
    "%s%n%x",
    "{}",
    "[]",
    "null",
    '{"pane": 1}',
)


KNOWN_CHOICES = 16  # see `known`


def known(values: tuple[Any, ...]) -> st.SearchStrategy[Any]:
    """One of `values`, drawn as an index of a fixed range: the panes there differ from one
    replay of an example to the next, and hypothesis needs the same draws each time."""
    return st.integers(0, KNOWN_CHOICES - 1).map(lambda i: values[i % len(values)])


@dataclass(frozen=True)
class Hints:
    """What generated values are drawn from besides random ones."""

    integers: tuple[int, ...] = ()  # ids of panes and windows that exist
    strings: tuple[str, ...] = ()  # words the service knows (signal names, directions, ...)
    paths: tuple[str, ...] = ()  # object paths that exist
    options: Mapping[str, str] = field(default_factory=dict)  # a{sv} key -> its value's type


def arguments(signature: str, hints: Hints) -> st.SearchStrategy[list[Any]]:
    """The body of a call whose in-signature is `signature`."""
    types = get_signature_tree(signature).types
    return st.tuples(*(value(t, hints) for t in types)).map(list)


def value(t: SignatureType, hints: Hints, depth: int = 0) -> st.SearchStrategy[Any]:
    """A value of the single complete type `t`."""
    token = t.token
    if token in INTEGER_BOUNDS:
        return _integers(token, hints)
    if token == "b":
        return st.booleans()
    if token == "d":
        return st.floats() | st.sampled_from([0.0, -0.0, 1e308, -1e-308, 0.5, 1.0])
    if token == "s":
        return text(hints)
    if token == "o":
        return object_paths(hints)
    if token == "g":
        return signatures(depth).map("".join)
    if token == "h":
        return st.just(0)  # an index into the message's descriptors: the caller sends one
    if token == "v":
        return variants(hints, depth)
    if token == "(":
        return st.tuples(*(value(c, hints, depth + 1) for c in t.children)).map(list)
    if token == "a":
        return _array(t.children[0], hints, depth + 1)
    raise ValueError(f"no strategy for D-Bus type {t.signature!r}")


def _integers(token: str, hints: Hints) -> st.SearchStrategy[int]:
    low, high = INTEGER_BOUNDS[token]
    edges = sorted({low, low + 1, high, high - 1, 0, 1, -1 if low < 0 else 2, high // 2 + 1})
    fitting = tuple(n if low <= n <= high else low for n in hints.integers) or (low,)
    return st.one_of(st.integers(low, high), st.sampled_from(edges), known(fitting))


def text(hints: Hints) -> st.SearchStrategy[str]:
    short = st.text(CHARACTERS, max_size=40)
    repeated = st.tuples(st.text(CHARACTERS, min_size=1, max_size=4), st.integers(1, LONG_TEXT))
    long = repeated.map(lambda p: (p[0] * p[1])[:LONG_TEXT])
    return st.one_of(short, st.sampled_from(NASTY_TEXT), known(hints.strings or ("",)), long)


SEGMENT = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", min_size=1)


def object_paths(hints: Hints) -> st.SearchStrategy[str]:
    """Valid object paths: `/`, or `/`-separated non-empty runs of [A-Za-z0-9_]."""
    anywhere = st.lists(SEGMENT, max_size=6).map(lambda parts: "/" + "/".join(parts))
    ids = st.integers(0, (1 << 64) - 1).map(str) | SEGMENT
    kinds = st.sampled_from(["pane", "window", "host"])
    under_mux = st.tuples(kinds, ids).map(lambda p: f"/org/mux/Mux1/{p[0]}/{p[1]}")
    return st.one_of(anywhere, under_mux, known(hints.paths or ("/",)))


def signatures(depth: int = 0) -> st.SearchStrategy[tuple[str, ...]]:
    """One complete type, as the characters of its signature (variants and `g` values).

    `h` is left out: a descriptor index in a variant would need a descriptor sent with it.
    """
    leaves = st.sampled_from(BASIC + ("v" if depth < MAX_DEPTH - 4 else ""))

    def extend(inner: st.SearchStrategy[tuple[str, ...]]) -> st.SearchStrategy[tuple[str, ...]]:
        array = inner.map(lambda sig: ("a", *sig))
        struct = st.lists(inner, min_size=1, max_size=3).map(
            lambda members: ("(", *(c for m in members for c in m), ")")
        )
        dictionary = st.tuples(st.sampled_from(BASIC), inner).map(
            lambda kv: ("a", "{", kv[0], *kv[1], "}")
        )
        return array | struct | dictionary

    # max_leaves bounds the nesting too: each container level holds at least one leaf.
    return st.recursive(leaves.map(lambda c: (c,)), extend, max_leaves=4)


def variants(hints: Hints, depth: int) -> st.SearchStrategy[Variant]:
    if depth >= MAX_DEPTH:
        return st.just(Variant("s", "deep"))

    def of(signature: str) -> st.SearchStrategy[Variant]:
        (t,) = get_signature_tree(signature).types
        return value(t, hints, depth + 1 + signature.count("a") + signature.count("(")).map(
            lambda v: Variant(signature, v)
        )

    return signatures(depth).map("".join).flatmap(of)


def _array(element: SignatureType, hints: Hints, depth: int) -> st.SearchStrategy[Any]:
    if element.token == "y":
        long = st.tuples(st.binary(min_size=1, max_size=4), st.integers(1, LONG_BYTES))
        return st.binary(max_size=64) | long.map(lambda p: (p[0] * p[1])[:LONG_BYTES])
    if element.token == "{":
        key_type, value_type = element.children
        if key_type.token == "s" and value_type.token == "v":
            return _options(hints, depth)
        entries = st.tuples(value(key_type, hints, depth), value(value_type, hints, depth))
        return st.lists(entries, max_size=SHORT).map(dict)
    one = value(element, hints, depth)
    if depth > 1:  # long arrays of long arrays would multiply: only the outermost is long
        return st.lists(one, max_size=SHORT)
    # A long array of small elements only: a message is at most 128 MiB, an array 64 MiB.
    if element.token in INTEGER_BOUNDS or element.token in "bd":
        small = one
    elif element.token == "s":
        small = st.text(CHARACTERS, max_size=16) | st.sampled_from(NASTY_TEXT)
    else:
        return st.lists(one, max_size=SHORT)
    many = st.tuples(st.lists(small, min_size=1, max_size=3), st.integers(1, LONG_ARRAY))
    return st.lists(one, max_size=SHORT) | many.map(lambda p: (p[0] * p[1])[:LONG_ARRAY])


def _options(hints: Hints, depth: int) -> st.SearchStrategy[dict[str, Variant]]:
    """a{sv}: an options dictionary; known names often get a value of their declared type."""
    anything = st.tuples(text(hints), variants(hints, depth))
    entries: st.SearchStrategy[tuple[str, Variant]] = anything
    if hints.options:

        def typed(name: str) -> st.SearchStrategy[tuple[str, Variant]]:
            signature = hints.options[name]
            (t,) = get_signature_tree(signature).types
            return value(t, hints, depth + 1).map(lambda v: (name, Variant(signature, v)))

        known = st.sampled_from(sorted(hints.options)).flatmap(typed)
        wrong_type = st.tuples(st.sampled_from(sorted(hints.options)), variants(hints, depth))
        entries = st.one_of(known, known, wrong_type, anything)
    return st.lists(entries, max_size=SHORT).map(dict)
