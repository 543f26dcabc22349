"""`org.mux.Mux1.Window`: one object per window, read-only properties
(docs/windows.md#window-objects).

`WINDOW_FIELDS` is the one declaration of what mux says about a window: it makes
the D-Bus properties of the window objects (served by `window_objects`), the
`InterfacesAdded` body, the `PropertiesChanged` contents and the `ListWindows`
entries.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dbus_fast import Variant

from mux.panes.windows import Window
from mux.protocol.layout import to_json
from mux.protocol.names import WINDOW_INTERFACE, WINDOW_PATH_PREFIX
from mux.protocol.window_options import GEOMETRY_KEYS
from mux.system.dbus_property_objects import PropertyObjects, objects_of, read_only_interface


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


def window_values(window: Window) -> tuple[Any, ...]:
    """Every property's value, in WINDOW_FIELDS order."""
    return tuple(field.read(window) for field in WINDOW_FIELDS)


def changed_properties(before: tuple[Any, ...], now: tuple[Any, ...]) -> dict[str, Variant]:
    """The PropertiesChanged contents between two `window_values` of a window."""
    return {
        field.property: Variant(field.signature, value)
        for field, was, value in zip(WINDOW_FIELDS, before, now, strict=True)
        if was != value
    }


# The introspection of org.mux.Mux1.Window.
WINDOW_INTERFACE_DESCRIPTION = read_only_interface(
    WINDOW_INTERFACE, ((field.property, field.signature) for field in WINDOW_FIELDS)
)


def window_objects(windows: Mapping[int, Window]) -> PropertyObjects:
    """The window objects of the windows in `windows` (by id), as the bus serves them."""
    parent = WINDOW_PATH_PREFIX.rstrip("/")
    return objects_of(parent, WINDOW_INTERFACE_DESCRIPTION, windows, window_property_variants)
