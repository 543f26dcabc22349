"""What `muxctl install` writes: rendered from the shipped files, for this interpreter."""

import plistlib
from pathlib import Path

from mux.system.paths import resolve_paths
from muxctl.installation import launchd_file, muxd_argv, systemd_files, systemd_quote


def test_systemd_files(tmp_path: Path) -> None:
    files = {f.path.name: f for f in systemd_files(tmp_path / "config", tmp_path / "data")}
    service = files["mux.service"].content.decode()
    assert files["mux.service"].path == tmp_path / "config/systemd/user/mux.service"
    assert f"ExecStart={systemd_quote(muxd_argv())}\n" in service
    assert "-P -m mux" in service and "/usr/bin/muxd" not in service
    assert "Type=notify" in service
    dbus = files["org.mux.Mux1.service"]
    assert dbus.path == tmp_path / "data/dbus-1/services/org.mux.Mux1.service"
    assert "SystemdService=mux.service" in dbus.content.decode()


def test_systemd_quoting() -> None:
    assert systemd_quote(["/usr/bin/python3", "-m", "mux"]) == "/usr/bin/python3 -m mux"
    assert systemd_quote(["/opt/my python/bin/python", "a%b"]) == (
        '"/opt/my python/bin/python" a%%b'
    )
    assert systemd_quote(["back\\slash"]) == "back\\\\slash"
    assert systemd_quote(["$HOME", "${HOME}"]) == "$$HOME $${HOME}"


def test_launch_agent(tmp_path: Path) -> None:
    paths = resolve_paths({"HOME": str(tmp_path)})
    file = launchd_file(tmp_path, paths)
    assert file.path == tmp_path / "Library/LaunchAgents/org.mux.muxd.plist"
    plist = plistlib.loads(file.content)
    assert plist["Label"] == "org.mux.muxd"
    assert plist["ProgramArguments"] == muxd_argv()
    assert plist["RunAtLoad"] is True
    assert plist["Sockets"]["attach"]["SockPathName"] == str(paths.attach_socket)
    assert plist["Sockets"]["attach"]["SockPathMode"] == 0o600
    assert plist["StandardErrorPath"] == str(tmp_path / "Library/Logs/mux/muxd.log")
    assert plist["EnvironmentVariables"]["PATH"]
