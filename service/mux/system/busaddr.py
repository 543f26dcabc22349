"""Which D-Bus bus mux lives on (docs/paths.md), for muxd and muxctl alike.

Order: `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus` (the systemd
user bus), else mux's private bus at `<runtime>/bus`, which muxd starts when
none of the others exists. Stdlib only, and no pathlib: muxctl imports this on
every call (mux.system.paths says why).
"""

import os
import socket
import stat
import string
from collections.abc import Mapping
from enum import StrEnum
from typing import NamedTuple

from mux.system.paths import Paths


class BusKind(StrEnum):
    SESSION = "session"  # DBUS_SESSION_BUS_ADDRESS
    USER = "user"  # $XDG_RUNTIME_DIR/bus
    PRIVATE = "private"  # <runtime>/bus, started by muxd


class BusChoice(NamedTuple):  # not a dataclass: muxctl's start-up (mux.system.paths)
    kind: BusKind
    address: str


# Bytes a D-Bus address may carry unescaped (D-Bus specification, "Addresses").
_ADDRESS_SAFE = frozenset((string.ascii_letters + string.digits + "-_/.*").encode())


def unix_address(path: str | os.PathLike[str]) -> str:
    """`unix:path=...` for a socket path, escaped so that any path is a valid address."""
    raw = os.fsencode(path)
    return "unix:path=" + "".join(
        chr(byte) if byte in _ADDRESS_SAFE else f"%{byte:02x}" for byte in raw
    )


def _is_socket(path: str | os.PathLike[str]) -> bool:
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except OSError:
        return False


def choose_bus(paths: Paths, environ: Mapping[str, str] | None = None) -> BusChoice:
    return choose_bus_for(os.fspath(paths.private_bus), environ)


def choose_bus_for(private_bus: str, environ: Mapping[str, str] | None = None) -> BusChoice:
    """choose_bus, given the socket mux's private bus would listen on (muxctl: no Paths)."""
    env = os.environ if environ is None else environ
    session = env.get("DBUS_SESSION_BUS_ADDRESS", "")
    if session:
        return BusChoice(BusKind.SESSION, session)
    xdg_runtime = env.get("XDG_RUNTIME_DIR", "")
    if xdg_runtime and os.path.isabs(xdg_runtime):
        user_bus = os.path.join(xdg_runtime, "bus")
        if _is_socket(user_bus):
            return BusChoice(BusKind.USER, unix_address(user_bus))
    return BusChoice(BusKind.PRIVATE, unix_address(private_bus))


def socket_answers(path: str | os.PathLike[str]) -> bool:
    """Whether something listens on the Unix socket at `path` (a stale file does not)."""
    if not _is_socket(path):
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        try:
            sock.connect(str(path))
        except OSError:
            return False
    return True
