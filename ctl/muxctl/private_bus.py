"""muxctl's connection to mux's private bus (`<runtime>/bus`, started by muxd when
there is no session bus): made only once the socket has passed the checks of
mux.system.socket_trust, so that nothing — not even D-Bus's authentication — goes to
a bus another user serves there. A session's own bus is not mux's socket to vouch
for: muxctl.client.open_bus connects to it as any D-Bus client does.
"""

import socket

from jeepney.io.blocking import DBusConnection

from mux.system.busaddr import BusKind, unix_address
from mux.system.socket_trust import UntrustedSocket, connect_trusted
from muxctl.errors import CtlError, SocketRefused

AUTH_TIMEOUT_SECONDS = 2.0  # as jeepney's open_dbus_connection


def open_private_bus(path: str) -> DBusConnection:
    """mux's private bus at `path`, once its directory and the dbus-daemon serving it
    are found to be the user's (mux.system.socket_trust): every argv, environment and
    key muxctl sends goes there. SocketRefused, before anything is sent, when they are
    not; CtlError naming the bus when it does not answer."""
    from jeepney.auth import FDNegotiationError

    try:
        try:  # fds, for OpenAttach, as open_bus
            return _on_socket(_authenticated(path, enable_fds=True), enable_fds=True)
        except FDNegotiationError:
            return _on_socket(_authenticated(path, enable_fds=False), enable_fds=False)
    except UntrustedSocket as refusal:
        raise SocketRefused(refusal) from None
    except Exception as e:  # OSError, AuthenticationError...
        address = unix_address(path)
        raise CtlError(f"cannot connect to the {BusKind.PRIVATE} bus ({address}): {e}") from None


def _authenticated(path: str, *, enable_fds: bool) -> socket.socket:
    """A connection to the bus at `path` that has passed socket_trust's checks and then
    D-Bus's EXTERNAL authentication (jeepney's open_dbus_connection does the same, but
    connects itself: it would have sent before the peer could be checked)."""
    from jeepney.auth import BEGIN, Authenticator

    sock = connect_trusted(path, timeout=AUTH_TIMEOUT_SECONDS)
    try:
        sock.settimeout(AUTH_TIMEOUT_SECONDS)
        if hasattr(socket, "SCM_CREDS"):  # BSD: the kernel fills in our credentials
            sock.sendmsg([b"\0"], [(socket.SOL_SOCKET, socket.SCM_CREDS, bytes(512))])
        else:  # Linux: the bus reads them with SO_PEERCRED
            sock.sendall(b"\0")
        authenticator = Authenticator(enable_fds=enable_fds, inc_null_byte=False)
        for request in authenticator:
            sock.sendall(request)
            answer = sock.recv(1024)
            if not answer:
                raise ConnectionResetError("the bus closed the connection")
            authenticator.feed(answer)
        sock.sendall(BEGIN)
        sock.settimeout(None)
    except BaseException:
        sock.close()
        raise
    return sock


def _on_socket(sock: socket.socket, *, enable_fds: bool) -> DBusConnection:
    """A jeepney connection on an authenticated socket (it says Hello)."""
    try:
        return DBusConnection(sock, enable_fds=enable_fds)
    except BaseException:
        sock.close()
        raise
