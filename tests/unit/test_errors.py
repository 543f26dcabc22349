"""Every error of docs/dbus-api.md#errors exists with exactly its D-Bus name."""

from mux.protocol import errors
from mux.protocol.names import ERROR_PREFIX

DOCUMENTED_NAMES = {
    "NoSuchPane",
    "InvalidArgument",
    "SpawnFailed",
    "PreconditionFailed",
    "Unavailable",
    "NotSupported",
}


def test_error_names_match_the_documented_ones() -> None:
    assert {cls.dbus_name for cls in errors.ERROR_TYPES} == {
        ERROR_PREFIX + name for name in DOCUMENTED_NAMES
    }
    assert ERROR_PREFIX == "org.mux.Mux1.Error."


def test_no_such_pane_message() -> None:
    assert errors.NoSuchPane(7).message == "there is no pane 7"


def test_short_names() -> None:
    assert errors.short_name("org.mux.Mux1.Error.SpawnFailed") == "SpawnFailed"
    assert errors.short_name("org.freedesktop.DBus.Error.Failed") == (
        "org.freedesktop.DBus.Error.Failed"
    )
