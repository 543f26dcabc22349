"""`pipx install` from the sdist works, and that installation's `muxctl install` then
writes user units that run it (packaging/README.md#pipx).

pipx builds mux from the sdist with build isolation (setuptools from PyPI) and installs
the pinned dependency ranges from PyPI: this test needs the network. Everything it
writes (pipx's home, the units, pip's cache) is below one temporary directory, removed
at the end; no systemd user manager or bus is in reach, so `muxctl install` only
writes files and says to run `systemctl --user daemon-reload`.
"""

from __future__ import annotations

import configparser
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    """A directory removed after the test: a pipx installation is ~40 MB."""
    path = tmp_path / "pipx-test"
    path.mkdir()
    yield path
    shutil.rmtree(path)


def isolated_env(workdir: Path) -> dict[str, str]:
    """This environment without anything that points at the user's own installation."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("XDG_", "PIPX_", "MUX_", "DBUS_"))
        and key not in {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"}
    }
    runtime = workdir / "runtime"
    runtime.mkdir(mode=0o700)
    env.update(
        HOME=str(workdir / "home"),
        PIPX_HOME=str(workdir / "pipx"),
        PIPX_BIN_DIR=str(workdir / "bin"),
        PIPX_MAN_DIR=str(workdir / "man"),
        XDG_CONFIG_HOME=str(workdir / "config"),
        XDG_DATA_HOME=str(workdir / "data"),
        XDG_STATE_HOME=str(workdir / "state"),
        XDG_CACHE_HOME=str(workdir / "cache"),
        # Where `muxctl install` looks for a systemd user manager ($XDG_RUNTIME_DIR/systemd/
        # private) and a user bus ($XDG_RUNTIME_DIR/bus): neither is here.
        XDG_RUNTIME_DIR=str(runtime),
    )
    return env


def run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        argv, env=env, cwd=cwd, capture_output=True, text=True, check=False, timeout=300
    )
    assert result.returncode == 0, f"{shlex.join(argv)}:\n{result.stdout}\n{result.stderr}"
    return result


class UnitFile(configparser.ConfigParser):
    """A systemd unit, D-Bus service or desktop file: keys keep their case, no interpolation."""

    def __init__(self, path: Path) -> None:
        super().__init__(interpolation=None, strict=False)
        self.read_string(path.read_text())

    def optionxform(self, optionstr: str) -> str:
        return optionstr


def test_pipx_install_from_the_sdist_then_muxctl_install(workdir: Path) -> None:
    if importlib.util.find_spec("pipx") is None:
        pytest.fail("pipx is not installed; it is in the test extras (pip install -e '.[test]')")
    with (ROOT / "pyproject.toml").open("rb") as f:
        version = tomllib.load(f)["project"]["version"]
    env = isolated_env(workdir)
    dist = workdir / "dist"
    run([sys.executable, "-m", "build", "--sdist", "--outdir", str(dist), str(ROOT)], env, workdir)
    (sdist,) = dist.glob("mux-*.tar.gz")

    run([sys.executable, "-m", "pipx", "install", str(sdist)], env, workdir)
    bin_dir, venv = workdir / "bin", workdir / "pipx" / "venvs" / "mux"
    assert run([str(bin_dir / "muxd"), "--version"], env, workdir).stdout.strip() == (
        f"muxd {version}"
    )
    # The programs run pipx's venv, not this checkout.
    probe = "import mux; print(mux.__file__)"
    where = run([str(venv / "bin" / "python"), "-c", probe], env, workdir)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout

    report = json.loads(run([str(bin_dir / "muxctl"), "--json", "install"], env, workdir).stdout)
    config, data = workdir / "config", workdir / "data"
    service = config / "systemd" / "user" / "mux.service"
    socket = config / "systemd" / "user" / "mux.socket"
    activation = data / "dbus-1" / "services" / "org.mux.Mux1.service"
    desktop = data / "applications" / "org.mux.Mux.desktop"
    assert {Path(f["path"]) for f in report["files"]} >= {service, socket, activation, desktop}
    assert all(f["changed"] for f in report["files"])
    assert any("no systemd user manager answers here" in a for a in report["actions"])

    # Every command names the pipx venv's interpreter: `<venv>/bin/python -P -m mux|muxctl`.
    python = str(venv / "bin" / "python")
    exec_start = UnitFile(service)["Service"]["ExecStart"]
    assert shlex.split(exec_start) == [python, "-P", "-m", "mux"]
    exec_reload = UnitFile(service)["Service"]["ExecReload"]
    assert shlex.split(exec_reload) == [python, "-P", "-m", "muxctl", "--no-start", "upgrade"]
    dbus_exec = UnitFile(activation)["D-BUS Service"]["Exec"]
    assert shlex.split(dbus_exec) == [python, "-P", "-m", "mux"]
    desktop_exec = UnitFile(desktop)["Desktop Entry"]["Exec"]
    assert shlex.split(desktop_exec)[:4] == [python, "-P", "-m", "muxctl"]
    assert socket.read_text() == (ROOT / "units" / "mux.socket").read_text()  # names no program
    # ... and that command is this installation's muxd.
    started = run([*shlex.split(exec_start), "--version"], env, workdir)
    assert started.stdout.strip() == f"muxd {version}"

    # Installing again changes nothing.
    again = json.loads(run([str(bin_dir / "muxctl"), "--json", "install"], env, workdir).stdout)
    assert not any(f["changed"] for f in again["files"])
