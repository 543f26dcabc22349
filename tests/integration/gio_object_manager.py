"""A GDBusObjectManagerClient on mux's ObjectManager, as GNOME's libraries use one:
run by the system Python (python3-gi), it prints what the client sees as JSON lines.

Usage: gio_object_manager.py ADDRESS SECONDS
First line: {"objects": {path: {interface: {property: value}}}} from the client's
cache after its GetManagedObjects; then one line per event it sees during SECONDS:
{"added": path, "properties": ...}, {"removed": path}, {"changed": path,
"properties": {...}}. Not a module of the suite: gi is not in the test venv.
"""

import json
import sys

from gi.repository import Gio, GLib  # type: ignore[import-not-found]

BUS_NAME = "org.mux.Mux1"
ROOT_PATH = "/org/mux/Mux1"


def _properties(proxy: "Gio.DBusProxy") -> dict[str, object]:
    return {
        name: proxy.get_cached_property(name).unpack() for name in proxy.get_cached_property_names()
    }


def _interfaces(dbus_object: "Gio.DBusObject") -> dict[str, dict[str, object]]:
    return {
        proxy.get_interface_name(): _properties(proxy) for proxy in dbus_object.get_interfaces()
    }


def _say(line: dict[str, object]) -> None:
    print(json.dumps(line), flush=True)


def main() -> int:
    address, seconds = sys.argv[1], float(sys.argv[2])
    flags = (
        Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
        | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
    )
    connection = Gio.DBusConnection.new_for_address_sync(address, flags, None, None)
    manager = Gio.DBusObjectManagerClient.new_sync(
        connection, Gio.DBusObjectManagerClientFlags.NONE, BUS_NAME, ROOT_PATH, None, None, None
    )
    objects = {o.get_object_path(): _interfaces(o) for o in manager.get_objects()}
    _say({"objects": objects})

    def added(_manager: object, dbus_object: "Gio.DBusObject") -> None:
        _say({"added": dbus_object.get_object_path(), "properties": _interfaces(dbus_object)})

    def removed(_manager: object, dbus_object: "Gio.DBusObject") -> None:
        _say({"removed": dbus_object.get_object_path()})

    def changed(
        _manager: object,
        dbus_object: "Gio.DBusObject",
        proxy: "Gio.DBusProxy",
        values: "GLib.Variant",
        _gone: object,
    ) -> None:
        _say({"changed": dbus_object.get_object_path(), "properties": values.unpack()})

    manager.connect("object-added", added)
    manager.connect("object-removed", removed)
    manager.connect("interface-proxy-properties-changed", changed)
    loop = GLib.MainLoop()
    GLib.timeout_add(int(seconds * 1000), loop.quit)
    loop.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
