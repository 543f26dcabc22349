"""Pane and window objects as D-Bus clients see them (docs/dbus-api.md#pane-objects,
docs/windows.md#window-objects): served from muxd's model rather than exported one
dbus-fast object each, they must look like any object: GLib's
GDBusObjectManagerClient follows them, busctl and gdbus introspect, read and are
refused the same way as elsewhere."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dbus_fast import Variant

from mux.protocol.names import PANE_INTERFACE, WINDOW_INTERFACE, pane_path, window_path
from tests.harness import DEFAULT_TIMEOUT, Service

SYSTEM_PYTHON = "/usr/bin/python3"
PROBE = Path(__file__).with_name("gio_object_manager.py")


class ObjectManagerProbe:
    """tests/integration/gio_object_manager.py on the service's bus, its lines read as
    they come."""

    def __init__(self, service: Service) -> None:
        check = subprocess.run(
            [SYSTEM_PYTHON, "-c", "from gi.repository import Gio"], capture_output=True, check=False
        )
        if check.returncode != 0:
            reason = "python3-gi is not installed (the test command installs it)"
            print(f"SKIPPED GDBusObjectManagerClient test: {reason}")
            pytest.skip(reason)
        self.process = subprocess.Popen(
            [SYSTEM_PYTHON, str(PROBE), service.bus_address, "120"],
            stdout=subprocess.PIPE,
            text=True,
        )
        self._lines: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(json.loads(line))
        self._lines.put({"ended": self.process.wait()})

    def next_line(self, wanted: Callable[[dict[str, Any]], bool], what: str) -> dict[str, Any]:
        """The first line from now on that is `wanted` (skipping others), within the deadline."""
        while True:
            try:
                line = self._lines.get(timeout=DEFAULT_TIMEOUT)
            except queue.Empty:
                raise AssertionError(f"GDBusObjectManagerClient did not see {what}") from None
            assert "ended" not in line, f"the GDBusObjectManagerClient probe ended: {line}"
            if wanted(line):
                return line

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


def test_gdbus_object_manager_client_follows_panes_and_windows(service: Service) -> None:
    first = service.spawn(["sleep", "60"], title="first")
    window = service.panes()[first]["window"]
    probe = ObjectManagerProbe(service)
    try:
        objects = probe.next_line(lambda line: "objects" in line, "the objects")["objects"]
        assert objects[pane_path(first)][PANE_INTERFACE]["Title"] == "first"
        assert objects[pane_path(first)][PANE_INTERFACE]["Window"] == window
        assert objects[window_path(window)][WINDOW_INTERFACE]["FocusedPane"] == first

        second = service.spawn(["sleep", "60"], title="second")
        added = probe.next_line(lambda line: line.get("added") == pane_path(second), "a spawn")
        assert added["properties"][PANE_INTERFACE]["Title"] == "second"

        service.call("Resize", "tqq", [second, 30, 90])
        changed = probe.next_line(
            lambda line: line.get("changed") == pane_path(second), "a pane's change"
        )
        assert changed["properties"]["Rows"] == 30

        service.call("SetWindow", "ta{sv}", [window, {"title": Variant("s", "renamed")}])
        changed = probe.next_line(
            lambda line: line.get("changed") == window_path(window), "a window's change"
        )
        assert changed["properties"] == {"Title": "renamed"}

        service.call("Kill", "t", [second])
        probe.next_line(lambda line: line.get("removed") == pane_path(second), "a kill")
    finally:
        probe.stop()


def test_introspection_walks_to_each_pane_and_window(service: Service) -> None:
    pane = service.spawn(["sleep", "60"])
    window = service.panes()[pane]["window"]
    tree = service.busctl("tree", "org.mux.Mux1").stdout
    assert pane_path(pane) in tree and window_path(window) in tree
    out = service.gdbus_call("org.freedesktop.DBus.Introspectable.Introspect", path="/").stdout
    assert "org" in out
    text = subprocess.run(
        [
            *("gdbus", "introspect", "--address", service.bus_address),
            *("--dest", "org.mux.Mux1", "--object-path", pane_path(pane)),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=DEFAULT_TIMEOUT,
    ).stdout
    assert f"interface {PANE_INTERFACE}" in text
    assert "readonly s Title" in text
    # A pane that is not there has no interface of its own.
    absent = service.busctl("introspect", "org.mux.Mux1", pane_path(pane + 100), check=False)
    assert PANE_INTERFACE not in absent.stdout


def test_properties_calls_are_answered_and_refused_as_for_any_object(service: Service) -> None:
    pane = service.spawn(["sleep", "60"], title="props")
    path = pane_path(pane)
    got = service.busctl("get-property", "org.mux.Mux1", path, PANE_INTERFACE, "Title")
    assert got.stdout.strip() == 's "props"'
    every = service.gdbus_call("org.freedesktop.DBus.Properties.GetAll", PANE_INTERFACE, path=path)
    assert "'Title': <'props'>" in every.stdout
    # "": any interface (the D-Bus specification); a standard interface: no properties.
    every = service.gdbus_call("org.freedesktop.DBus.Properties.GetAll", "''", path=path)
    assert "'Title': <'props'>" in every.stdout
    peer = "org.freedesktop.DBus.Peer"
    none = service.gdbus_call("org.freedesktop.DBus.Properties.GetAll", peer, path=path)
    assert none.stdout.strip() == "(@a{sv} {},)"
    refusals = {
        "PropertyReadOnly": ("set-property", path, PANE_INTERFACE, "Title", "s", "x"),
        "UnknownProperty": ("get-property", path, PANE_INTERFACE, "NoSuch"),
        "UnknownInterface": ("get-property", path, "org.example.Other", "Title"),
        "UnknownObject": ("get-property", pane_path(pane + 100), PANE_INTERFACE, "Title"),
    }
    for error, (verb, *args) in refusals.items():
        result = service.busctl(verb, "org.mux.Mux1", *args, check=False)
        assert result.returncode != 0, (error, result.stdout)
        assert result.stderr.strip(), error
    ping = service.gdbus_call("org.freedesktop.DBus.Peer.Ping", path=path)
    assert ping.stdout.strip() == "()"
    assert service.panes()[pane]["title"] == "props"  # the refused Set changed nothing
