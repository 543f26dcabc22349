"""The desktop files mux ships (docs/desktop.md#files): valid, pointing at each other,
the interface XML what the service introspects, and installed for the user by
`muxctl install`."""

from __future__ import annotations

import configparser
import shutil
import subprocess
from pathlib import Path

import pytest

from muxctl.installation import desktop_exec, desktop_files
from tests.desktop.interface_xml import OBJECTS, introspected_interfaces

DESKTOP = Path(__file__).resolve().parents[2] / "desktop"


def validate(path: Path) -> None:
    if shutil.which("desktop-file-validate") is None:
        pytest.fail(
            "desktop-file-validate is missing: the test command installs desktop-file-utils"
        )
    result = subprocess.run(
        ["desktop-file-validate", str(path)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def test_the_shipped_desktop_files_are_valid() -> None:
    validate(DESKTOP / "org.mux.Mux.desktop")
    validate(DESKTOP / "krunner" / "org.mux.Mux.desktop")


def test_the_search_provider_names_a_shown_entry_and_the_served_object() -> None:
    ini = configparser.ConfigParser()
    ini.read(DESKTOP / "org.mux.Mux.search-provider.ini")
    provider = ini["Shell Search Provider"]
    assert provider["BusName"] == "org.mux.Mux1"
    assert provider["ObjectPath"] == "/org/mux/Mux1/SearchProvider"
    assert provider["Version"] == "2"
    entry = (DESKTOP / provider["DesktopId"]).read_text()
    assert "NoDisplay=true" not in entry, "GNOME drops a provider whose entry is hidden"
    krunner = (DESKTOP / "krunner" / "org.mux.Mux.desktop").read_text()
    assert "X-Plasma-DBusRunner-Path=/org/mux/Mux1/KRunner" in krunner


def test_the_interface_xml_is_what_the_service_introspects() -> None:
    served = introspected_interfaces()
    assert set(served) == set(OBJECTS)
    for name, text in served.items():
        shipped = DESKTOP / "interfaces" / f"{name}.xml"
        assert shipped.read_text() == text, f"{shipped} is stale: run scripts/interface-xml"


def test_install_writes_the_user_files_with_this_muxctl(tmp_path: Path) -> None:
    files = {f.path.relative_to(tmp_path).as_posix(): f for f in desktop_files(tmp_path)}
    assert set(files) == {
        "applications/org.mux.Mux.desktop",
        "krunner/dbusplugins/org.mux.Mux.desktop",
    }
    entry = files["applications/org.mux.Mux.desktop"]
    entry.path.parent.mkdir(parents=True)
    entry.path.write_bytes(entry.content)
    validate(entry.path)
    text = entry.content.decode()
    assert "-P -m muxctl new" in text and "-P -m muxctl attach" in text
    assert desktop_exec(["/opt/my app/python", "a$b"]) == '"/opt/my app/python" "a\\$b"'
