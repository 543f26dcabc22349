"""The introspection of mux's own interfaces, from a running muxd, as the XML files
packages install under /usr/share/dbus-1/interfaces (docs/desktop.md#files)."""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET

from tests.harness import Service, temp_root

HEADER = (
    '<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"\n'
    ' "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">\n'
)
OBJECTS = {
    "org.mux.Mux1.Manager": "/org/mux/Mux1",
    "org.mux.Mux1.Pane": "/org/mux/Mux1/pane/1",
    "org.mux.Mux1.Window": "/org/mux/Mux1/window/1",
}


def introspected_interfaces() -> dict[str, str]:
    """Each org.mux.Mux1 interface's description, as text."""
    with temp_root() as root:
        service = Service(root, bus_address=None).start()
        try:
            service.spawn(["sleep", "60"])
            return {name: _describe(service, name, path) for name, path in OBJECTS.items()}
        finally:
            service.stop()


def _describe(service: Service, name: str, path: str) -> str:
    xml = introspect_xml(service, path)
    (interface,) = [i for i in ET.fromstring(xml).iter("interface") if i.get("name") == name]
    node = ET.Element("node")
    node.append(interface)
    ET.indent(node, space="  ")
    return HEADER + ET.tostring(node, encoding="unicode") + "\n"


def introspect_xml(service: Service, path: str) -> str:
    """busctl's introspection of `path` as XML, from the service's bus."""
    result = subprocess.run(
        [
            "busctl",
            f"--address={service.bus_address}",
            "--xml-interface",
            "introspect",
            "org.mux.Mux1",
            path,
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return result.stdout
