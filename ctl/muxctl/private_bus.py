"""muxctl's check of mux's private bus (`<runtime>/bus`, started by muxd when there
is no session bus) before it connects: nothing — not even D-Bus's authentication —
may go to a bus another user serves there. A session's own bus is not mux's socket
to vouch for: muxctl connects to it as any D-Bus client does.
"""

from mux.system.busaddr import BusKind, unix_address
from mux.system.socket_trust import UntrustedSocket, connect_trusted
from muxctl.errors import CtlError, SocketRefused

PROBE_TIMEOUT_SECONDS = 2.0  # as jeepney's authentication


def check_private_bus(path: str) -> None:
    """Whether the bus at `path` may be used: its directory and the dbus-daemon serving
    it are the user's (mux.system.socket_trust); every argv, environment and key muxctl
    sends goes there. SocketRefused, before anything is sent, when they are not;
    CtlError naming the bus when it does not answer.

    The check is a connection of its own, closed before jeepney connects and
    authenticates (jeepney sends as soon as it connects): the directory is the user's
    and no one else may write to it, so no other user can put another socket at `path`
    in between."""
    try:
        connect_trusted(path, timeout=PROBE_TIMEOUT_SECONDS).close()
    except UntrustedSocket as refusal:
        raise SocketRefused(refusal) from None
    except OSError as e:
        address = unix_address(path)
        raise CtlError(f"cannot connect to the {BusKind.PRIVATE} bus ({address}): {e}") from None
