"""Every error the service reports to a client, each carrying its D-Bus error name.

The D-Bus layer turns these into error replies in exactly one place
(`mux.dbus.errors`); muxctl maps the names to exit statuses (`muxctl.errors`).
Messages are written for a person: they say what was wrong and never contain
a private path of the service or a raw OS error.
"""

from typing import ClassVar

from mux.protocol.names import ERROR_PREFIX


class MuxError(Exception):
    """Base of every refusal the service answers with a named error.

    Only the subclasses are raised: each carries one of the names in docs/dbus-api.md#errors.
    """

    dbus_name: ClassVar[str]

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NoSuchPane(MuxError):
    dbus_name = ERROR_PREFIX + "NoSuchPane"

    def __init__(self, pane_id: int, message: str = "") -> None:
        super().__init__(message or f"there is no pane {pane_id}")
        self.pane_id = pane_id


class InvalidArgument(MuxError):
    dbus_name = ERROR_PREFIX + "InvalidArgument"


class SpawnFailed(MuxError):
    dbus_name = ERROR_PREFIX + "SpawnFailed"


class PreconditionFailed(MuxError):
    dbus_name = ERROR_PREFIX + "PreconditionFailed"


class Unavailable(MuxError):
    dbus_name = ERROR_PREFIX + "Unavailable"


class NotSupported(MuxError):
    dbus_name = ERROR_PREFIX + "NotSupported"


ERROR_TYPES: tuple[type[MuxError], ...] = (
    NoSuchPane,
    InvalidArgument,
    SpawnFailed,
    PreconditionFailed,
    Unavailable,
    NotSupported,
)


def short_name(dbus_name: str) -> str:
    """`org.mux.Mux1.Error.NoSuchPane` -> `NoSuchPane`; other names unchanged."""
    return dbus_name.removeprefix(ERROR_PREFIX)
