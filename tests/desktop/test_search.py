"""Pane search for GNOME Shell and KRunner (docs/desktop.md#pane-search), driven with
gdbus (an independent client) and checked against the interface XML Debian ships
(gnome-shell-common, libkf5runner5); also through D-Bus activation with mux stopped."""

from __future__ import annotations

import ast
import json
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.desktop.conftest import recorder_script
from tests.desktop.interface_xml import introspect_xml
from tests.harness import Service, start_activating_bus, wait_for

GNOME = ("org.gnome.Shell.SearchProvider2", "/org/mux/Mux1/SearchProvider")
KRUNNER = ("org.kde.krunner1", "/org/mux/Mux1/KRunner")
DEBIAN_XML = {
    GNOME[0]: Path("/usr/share/dbus-1/interfaces/org.gnome.ShellSearchProvider2.xml"),
    KRUNNER[0]: Path("/usr/share/dbus-1/interfaces/kf5_org.kde.krunner1.xml"),
}


@pytest.fixture
def searched(tmp_path: Path) -> Iterator[tuple[Service, Path, dict[str, int]]]:
    terminal, record = recorder_script(tmp_path)
    root = tmp_path / "mux"
    root.mkdir()
    config = f"terminal_command = [{json.dumps(str(terminal))}]\n"
    service = Service(root, bus_address=None, config=config).start()
    alpha = tmp_path / "projects" / "alpha"
    alpha.mkdir(parents=True)
    try:
        panes = {
            "build": service.spawn(["sleep", "601"], title="Build Server", cwd=str(alpha)),
            "notes": service.spawn(["cat"], title="notes"),
            "alpha-shell": service.spawn(["sleep", "602"], title="misc", cwd=str(alpha)),
        }
        yield service, record, panes
    finally:
        service.stop()


def gdbus(service: Service, interface_path: tuple[str, str], method: str, *args: str) -> object:
    interface, path = interface_path
    result = subprocess.run(
        [
            "gdbus",
            "call",
            "--address",
            service.bus_address,
            "--dest",
            "org.mux.Mux1",
            "--object-path",
            path,
            "--method",
            f"{interface}.{method}",
            *args,
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    return _gvariant(result.stdout)


def _gvariant(text: str) -> object:
    """gdbus prints GVariant text; the plain shapes here read as Python literals."""
    text = text.strip().replace("@as ", "").replace("@a{sv} ", "").replace("<", "").replace(">", "")
    text = text.replace("uint32 ", "").replace("true", "True").replace("false", "False")
    return ast.literal_eval(text)


def test_gnome_search_finds_by_title_command_and_directory(
    searched: tuple[Service, Path, dict[str, int]],
) -> None:
    service, record, panes = searched
    ids = lambda *terms: gdbus(service, GNOME, "GetInitialResultSet", json.dumps(list(terms)))[0]  # noqa: E731
    assert ids("build") == [str(panes["build"])]
    assert ids("SERVER", "bui") == [str(panes["build"])]  # every term, any case
    assert ids("cat") == [str(panes["notes"])]  # the command
    # Both are in alpha; the one whose title or command says so would come first.
    assert ids("alpha") == [str(panes["build"]), str(panes["alpha-shell"])]
    assert ids("nothing-like-this") == []
    assert gdbus(service, GNOME, "GetSubsearchResultSet", json.dumps(ids("b")), '["build"]')[0] == [
        str(panes["build"])
    ]
    (metas,) = gdbus(service, GNOME, "GetResultMetas", json.dumps([str(panes["build"]), "999"]))
    assert metas[0]["id"] == str(panes["build"])
    assert metas[0]["name"] == f"Pane {panes['build']}: Build Server"
    assert metas[0]["description"].startswith("sleep 601 — ")
    assert len(metas) == 1, "a result that is gone has no meta"
    gdbus(service, GNOME, "ActivateResult", str(panes["notes"]), "[]", "0")
    argv = wait_for(lambda: record.exists() and record.read_text().split("\n"), what="a terminal")
    assert argv[-3:] == ["attach", str(panes["notes"]), ""]


def test_krunner_matches_opens_and_kills(searched: tuple[Service, Path, dict[str, int]]) -> None:
    service, record, panes = searched
    (matches,) = gdbus(service, KRUNNER, "Match", "'notes'")
    (match_id, text, icon, kind, relevance, properties) = matches[0]
    assert (match_id, text, icon, kind) == (
        str(panes["notes"]),
        f"Pane {panes['notes']}: notes",
        "utilities-terminal",
        100,
    )
    assert 0 < relevance <= 1 and properties["subtext"].startswith("cat — ")
    assert gdbus(service, KRUNNER, "Actions") == ([("kill", "Close the pane", "process-stop")],)
    gdbus(service, KRUNNER, "Run", str(panes["build"]), "''")
    wait_for(record.exists, what="a terminal")
    gdbus(service, KRUNNER, "Run", str(panes["notes"]), "'kill'")
    assert panes["notes"] not in service.panes()
    gdbus(service, KRUNNER, "Teardown")


def test_every_method_of_the_shipped_interfaces_is_served(
    searched: tuple[Service, Path, dict[str, int]],
) -> None:
    service, _, _ = searched
    for interface, path in (GNOME, KRUNNER):
        xml = DEBIAN_XML[interface]
        if not xml.exists():
            pytest.fail(f"{xml} is missing: the test command installs it (apt-get)")
        wanted = _methods(ET.parse(xml).getroot(), interface)
        introspected = introspect_xml(service, path)
        served = _methods(ET.fromstring(introspected), interface)
        assert served == wanted, (interface, served, wanted)


def _methods(root: ET.Element, interface: str) -> dict[str, tuple[str, str]]:
    (node,) = [i for i in root.iter("interface") if i.get("name") == interface]
    methods = {}
    for method in node.iter("method"):
        args = method.findall("arg")
        ins = "".join(a.get("type", "") for a in args if a.get("direction", "in") == "in")
        outs = "".join(a.get("type", "") for a in args if a.get("direction") == "out")
        # KF5's XML writes Config's a{sv} as "{sv}", which is no D-Bus signature.
        methods[method.get("name", "")] = (ins, "a{sv}" if outs == "{sv}" else outs)
    return methods


def test_a_search_starts_mux_through_d_bus_activation(tmp_path: Path) -> None:
    """mux stopped; a session bus that can activate it (the activation file mux ships,
    with this installation's muxd): the first search starts it, and finds the panes
    it restored from its snapshot."""

    service = Service(tmp_path, bus_address=None)
    service.start()
    service.spawn(["sleep", "603"], title="remembered")
    service.stop()  # the final snapshot holds the pane
    address = f"unix:path={tmp_path / 'session-bus'}"
    daemon = start_activating_bus(tmp_path / "data", address, service.env)
    try:
        service.bus_address = address
        found = gdbus(service, GNOME, "GetInitialResultSet", '["remembered"]')
        assert found == (["1"],)
        assert service.background_muxd(), "the bus started muxd"
    finally:
        service.stop_background()
        daemon.terminate()
        daemon.wait(timeout=10)
