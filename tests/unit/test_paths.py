"""XDG paths (docs/paths.md) and the runtime dir checks."""

import os
from pathlib import Path

import pytest

from mux.system.busaddr import BusKind, choose_bus
from mux.system.paths import RuntimeDirError, check_private_dir, ensure_private_dir, resolve_paths


def test_xdg_variables_are_honoured() -> None:
    paths = resolve_paths(
        {
            "HOME": "/home/u",
            "XDG_RUNTIME_DIR": "/run/user/1000",
            "XDG_STATE_HOME": "/s",
            "XDG_CONFIG_HOME": "/c",
        }
    )
    assert paths.runtime == Path("/run/user/1000/mux")
    assert paths.attach_socket == Path("/run/user/1000/mux/mux.sock")
    assert paths.private_bus == Path("/run/user/1000/mux/bus")
    assert paths.state == Path("/s/mux")
    assert paths.session_file == Path("/s/mux/session.json")
    assert paths.checkpoints == Path("/s/mux/checkpoints")
    assert paths.quarantine == Path("/s/mux/quarantine")
    assert paths.config_file == Path("/c/mux/config.toml")


def test_defaults_and_fallbacks() -> None:
    paths = resolve_paths({"HOME": "/home/u", "XDG_STATE_HOME": "relative/ignored"})
    assert paths.runtime == Path(f"/tmp/mux-{os.getuid()}")
    assert paths.state == Path("/home/u/.local/state/mux")
    assert paths.config_file == Path("/home/u/.config/mux/config.toml")


def test_private_dir_is_created_0700(tmp_path: Path) -> None:
    os.umask(0o022)
    target = ensure_private_dir(tmp_path / "mux")
    assert (target.stat().st_mode & 0o777) == 0o700


def test_group_or_world_accessible_dir_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "mux"
    target.mkdir()
    target.chmod(0o755)
    with pytest.raises(RuntimeDirError, match="accessible to other users"):
        ensure_private_dir(target)


def test_symlink_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(RuntimeDirError, match="symlink"):
        check_private_dir(link)


def test_dir_of_another_user_is_refused(tmp_path: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("needs root to give a directory to another user")
    target = tmp_path / "mux"
    target.mkdir(mode=0o700)
    os.chown(target, 65534, 65534)
    with pytest.raises(RuntimeDirError, match="owned by uid 65534"):
        check_private_dir(target)


def test_bus_discovery_order(tmp_path: Path) -> None:
    import socket

    paths = resolve_paths({"XDG_RUNTIME_DIR": str(tmp_path), "HOME": "/h"})
    env = {"XDG_RUNTIME_DIR": str(tmp_path), "DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"}
    assert choose_bus(paths, env).kind is BusKind.SESSION
    env.pop("DBUS_SESSION_BUS_ADDRESS")
    assert choose_bus(paths, env).kind is BusKind.PRIVATE
    assert choose_bus(paths, env).address == f"unix:path={tmp_path}/mux/bus"
    with socket.socket(socket.AF_UNIX) as user_bus:
        user_bus.bind(str(tmp_path / "bus"))
        choice = choose_bus(paths, env)
        assert choice.kind is BusKind.USER
        assert choice.address == f"unix:path={tmp_path}/bus"


def test_bus_addresses_are_escaped() -> None:
    from mux.system.busaddr import unix_address

    assert unix_address(Path("/run/user/1000/bus")) == "unix:path=/run/user/1000/bus"
    assert unix_address(Path("/tmp/my dir/a,b;c=d\\e")) == (
        "unix:path=/tmp/my%20dir/a%2cb%3bc%3dd%5ce"
    )
