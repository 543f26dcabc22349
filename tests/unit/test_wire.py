"""muxctl.wire: values for jeepney, and text D-Bus cannot carry refused before it is sent
(a bus daemon disconnects a client that sends a NUL or bytes of no UTF-8 in a string)."""

import pytest

from muxctl.errors import EXIT_USAGE, CtlError
from muxctl.wire import Variant, from_wire, to_wire


def test_variants_and_dicts_go_both_ways() -> None:
    body = [7, {"title": Variant("s", "build"), "rows": Variant("q", 24)}]
    wire = to_wire("ta{sv}", body)
    assert wire == (7, {"title": ("s", "build"), "rows": ("q", 24)})
    assert from_wire("ta{sv}", wire) == body


@pytest.mark.parametrize(
    ("text", "said"), [("a\x00b", "a NUL character"), ("a\udcffb", "not UTF-8")]
)
def test_text_dbus_cannot_carry_is_refused_saying_why(text: str, said: str) -> None:
    for signature, body in (("ts", [1, text]), ("ta{sv}", [1, {"title": Variant("s", text)}])):
        with pytest.raises(CtlError, match=said) as refused:
            to_wire(signature, body)
        assert refused.value.exit_status == EXIT_USAGE
