"""D-Bus values between muxctl and jeepney, the blocking D-Bus library muxctl speaks
with: variants as `Variant` objects both ways.

jeepney writes a variant as a `(signature, value)` tuple, which a struct also is;
muxctl (and the tests that use its client) write `Variant(signature, value)` and
read `.value`, as with dbus-fast, whose variants they also accept. The message's
signature says which tuples are variants.
"""

from typing import Any

from jeepney.low_level import Array, DictEntry, Struct, parse_signature
from jeepney.low_level import Variant as VariantType

from muxctl.errors import EXIT_USAGE, CtlError


class Variant:
    """A D-Bus variant: its signature and its value. (A plain class: dataclasses would
    load inspect, a fifth of muxctl's start.)"""

    __slots__ = ("signature", "value")

    def __init__(self, signature: str, value: Any) -> None:
        self.signature = signature
        self.value = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Variant):
            return NotImplemented
        return (self.signature, self.value) == (other.signature, other.value)

    def __hash__(self) -> int:
        return hash((self.signature, repr(self.value)))

    def __repr__(self) -> str:
        return f"Variant({self.signature!r}, {self.value!r})"


def _types(signature: str) -> list[Any]:  # jeepney's type objects
    chars = list(signature)
    types = []
    while chars:
        types.append(parse_signature(chars))
    return types


def to_wire(signature: str, body: list[Any]) -> tuple[Any, ...]:
    """A call's body as jeepney writes it."""
    return tuple(_to(t, v) for t, v in zip(_types(signature), body, strict=True))


def from_wire(signature: str, body: tuple[Any, ...]) -> list[Any]:
    """A reply's body, variants as Variant."""
    return [_from(t, v) for t, v in zip(_types(signature), body, strict=True)]


def _to(kind: Any, value: Any) -> Any:
    if isinstance(kind, VariantType):
        signature = value.signature  # Variant, or dbus-fast's (same attributes)
        (inner,) = _types(signature)
        return (signature, _to(inner, value.value))
    if isinstance(kind, Array):
        element = kind.elt_type
        if isinstance(element, DictEntry):
            key, item = element.fields
            return {_to(key, k): _to(item, v) for k, v in value.items()}
        if getattr(element, "struct_code", "") == "B":  # ay: bytes
            return bytes(value)
        return [_to(element, v) for v in value]
    if isinstance(kind, Struct):
        return tuple(_to(t, v) for t, v in zip(kind.fields, value, strict=True))
    if isinstance(value, str):
        _check_text(value)
    return value


def _check_text(text: str) -> None:
    """D-Bus carries text as UTF-8 without NUL: a bus daemon sent anything else
    disconnects the sender, so it is refused here, saying why."""
    if "\x00" in text:
        raise CtlError("a text given has a NUL character, which D-Bus cannot carry", EXIT_USAGE)
    try:
        text.encode()
    except UnicodeEncodeError:  # (bytes of no UTF-8 in an argument: surrogates)
        raise CtlError("a text given is not UTF-8, which D-Bus needs", EXIT_USAGE) from None


def _from(kind: Any, value: Any) -> Any:
    if isinstance(kind, VariantType):
        signature, inner = value
        (inner_kind,) = _types(signature)
        return Variant(signature, _from(inner_kind, inner))
    if isinstance(kind, Array):
        element = kind.elt_type
        if isinstance(element, DictEntry):
            key, item = element.fields
            return {_from(key, k): _from(item, v) for k, v in value.items()}
        if isinstance(value, bytes):
            return value
        return [_from(element, v) for v in value]
    if isinstance(kind, Struct):
        return [_from(t, v) for t, v in zip(kind.fields, value, strict=True)]
    return value
