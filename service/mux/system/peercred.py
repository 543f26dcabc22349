"""Who is on the other end of a Unix socket: SO_PEERCRED (Linux), LOCAL_PEER* (macOS).

Every connection the service accepts is checked with this; failing to find
out never counts as "the same user".
"""

import socket
import struct
import sys
from typing import NamedTuple

# macOS <sys/un.h>
_SOL_LOCAL = 0
_LOCAL_PEERCRED = 0x001
_LOCAL_PEERPID = 0x002
IS_LINUX = sys.platform == "linux"


# Not a dataclass: muxctl checks its attach socket's peer with this, and dataclasses
# (with inspect) would cost each attach ~10 ms of imports (mux.system.paths says more).
class PeerCredentials(NamedTuple):
    pid: int | None
    uid: int


class PeerUnknown(Exception):
    pass


def peer_credentials(sock: socket.socket) -> PeerCredentials:
    try:
        if IS_LINUX:
            raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            pid, uid, _gid = struct.unpack("3i", raw)
            return PeerCredentials(pid=pid or None, uid=uid)
        # struct xucred { u_int cr_version; uid_t cr_uid; short cr_ngroups; gid_t groups[16]; }
        raw = sock.getsockopt(_SOL_LOCAL, _LOCAL_PEERCRED, struct.calcsize("IIh16I"))
        _version, uid = struct.unpack_from("II", raw)
        pid_raw = sock.getsockopt(_SOL_LOCAL, _LOCAL_PEERPID, struct.calcsize("i"))
        (pid,) = struct.unpack("i", pid_raw)
        return PeerCredentials(pid=pid or None, uid=uid)
    except (OSError, struct.error) as e:
        raise PeerUnknown(f"the peer's credentials cannot be read ({type(e).__name__})") from None
