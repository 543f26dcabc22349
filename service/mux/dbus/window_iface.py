"""`org.mux.Mux1.Window`: one object per window, read-only properties
(docs/windows.md#window-objects).

`WINDOW_FIELDS` is the one declaration of what mux says about a window: it makes
the D-Bus properties of `WindowInterface`, the `InterfacesAdded` body, the
`PropertiesChanged` contents and the `ListWindows` entries.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dbus_fast import PropertyAccess, Variant
from dbus_fast.service import ServiceInterface, dbus_property

from mux.panes.windows import Window
from mux.protocol.layout import to_json
from mux.protocol.names import WINDOW_INTERFACE
from mux.protocol.window_options import GEOMETRY_KEYS


def _geometry(window: Window) -> dict[str, Variant]:
    return {key: Variant(GEOMETRY_KEYS[key], value) for key, value in window.geometry.items()}


@dataclass(frozen=True)
class WindowField:
    key: str  # its key in a ListWindows entry
    property: str  # its org.mux.Mux1.Window property
    signature: str  # its D-Bus type
    read: Callable[[Window], Any]


# In ListWindows order (and InterfacesAdded order).
WINDOW_FIELDS: tuple[WindowField, ...] = (
    WindowField("id", "Id", "t", lambda window: window.id),
    WindowField("title", "Title", "s", lambda window: window.title),
    WindowField("geometry", "Geometry", "a{sv}", _geometry),
    WindowField("layout", "Layout", "s", lambda window: to_json(window.layout)),
    WindowField("focused_pane", "FocusedPane", "t", lambda window: window.focused_pane),
)


def window_entry(window: Window) -> dict[str, Variant]:
    """One entry of `ListWindows`."""
    return {field.key: Variant(field.signature, field.read(window)) for field in WINDOW_FIELDS}


def window_property_variants(window: Window) -> dict[str, Variant]:
    """Every property of the window: the body of its InterfacesAdded."""
    return {field.property: Variant(field.signature, field.read(window)) for field in WINDOW_FIELDS}


class WindowInterface(ServiceInterface):
    """The D-Bus properties are added from WINDOW_FIELDS below the class."""

    __slots__ = ("_told", "window")  # no instance dict: one of these per window

    def __init__(self, window: Window) -> None:
        super().__init__(WINDOW_INTERFACE)
        self.window = window
        self._told = _values(window)  # (a tuple: a dict a window cost 0.3 KiB more)

    def emit_changed(self) -> None:
        """PropertiesChanged with what differs from what was told last."""
        now = _values(self.window)
        changed = {
            field.property: value
            for field, before, value in zip(WINDOW_FIELDS, self._told, now, strict=True)
            if before != value
        }
        self._told = now
        if changed:
            self.emit_properties_changed(changed)


def _values(window: Window) -> tuple[Any, ...]:
    """Every property's value, in WINDOW_FIELDS order."""
    return tuple(field.read(window) for field in WINDOW_FIELDS)


def _exported(field: WindowField) -> Any:
    def read(interface: WindowInterface) -> Any:
        return field.read(interface.window)

    read.__name__ = read.__qualname__ = field.property
    read.__annotations__ = {"return": field.signature}  # dbus-fast reads the type here
    return dbus_property(access=PropertyAccess.READ, name=field.property)(read)


for _field in WINDOW_FIELDS:
    setattr(WindowInterface, _field.property, _exported(_field))
