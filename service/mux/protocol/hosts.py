"""Names and shapes of federation (docs/federation.md), without I/O: host names, the
options of AddHost, a hub's id, what `muxctl where --json` prints."""

import json
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import unquote

from mux.protocol.errors import InvalidArgument
from mux.system.json_file import KIB, JsonFileKind, MalformedJson, parse_json_object

HOST_NAME = re.compile(r"[A-Za-z0-9_]{1,64}")
HUB_ID_BYTES = 16
DEFAULT_REMOTE_MUXCTL = "muxctl"
# An ssh destination: user@host, host, an alias, [v6]:port, ssh://user@host:port.
# Never an option (a leading "-"), and nothing a shell would read: a user's
# ProxyCommand or Match exec may hand %h to one.
_DESTINATION = re.compile(r"[A-Za-z0-9_.@%+:\[\]/][A-Za-z0-9_.@%+:\[\]/-]{0,254}")
# What a satellite prints for `muxctl where --json`: two paths, read as a file from disk is.
WHERE_ANSWER = JsonFileKind("the satellite's answer", 64 * KIB, max_depth=2)


class HostState(StrEnum):
    UP = "up"
    DIALING = "dialing"
    DOWN = "down"
    REFUSED = "refused"


def check_host_name(name: str) -> str:
    if not HOST_NAME.fullmatch(name):
        raise InvalidArgument(
            f"host name {name[:80]!r} is not valid: use 1 to 64 letters, digits or '_'"
        )
    return name


def check_destination(destination: str) -> str:
    if not _DESTINATION.fullmatch(destination):
        raise InvalidArgument(
            f"destination {destination[:80]!r} is not an ssh destination "
            "(user@host, host or an ssh alias; no spaces, not starting with '-')"
        )
    return destination


@dataclass(frozen=True)
class HostOptions:
    destination: str


def parse_add_host(options: dict[str, tuple[str, Any]]) -> HostOptions:
    """AddHost's options, as (signature, value) pairs: `destination s`, required.
    The command run on the satellite comes from config.toml only: nothing a bus
    client sends is executed."""
    for key in options:
        if key != "destination":
            raise InvalidArgument(f"unknown AddHost option {key[:40]!r} (known: destination)")
    if "destination" not in options:
        raise InvalidArgument("AddHost needs the option 'destination' (user@host or an alias)")
    signature, value = options["destination"]
    if signature != "s":
        raise InvalidArgument(f"AddHost option 'destination' must be a string (s), not {signature}")
    return HostOptions(check_destination(value))


def check_hub_id(hub_id: bytes) -> bytes:
    if len(hub_id) != HUB_ID_BYTES:
        raise InvalidArgument(f"a hub id is {HUB_ID_BYTES} bytes, not {len(hub_id)}")
    return hub_id


def link_identity(hub_id: bytes) -> str:
    """Who a registered connection is, for spawns and uses (docs/federation.md#links)."""
    return f"link:{hub_id.hex()}"


@dataclass(frozen=True)
class Where:
    """Where a mux serves: its bus address and its attach socket."""

    bus: str
    attach: str

    def to_json(self) -> str:
        return json.dumps({"bus": self.bus, "attach": self.attach})


class WhereError(ValueError):
    pass


def parse_where(text: str) -> Where:
    """What a satellite's `muxctl where --json` printed; WhereError saying what is wrong."""
    try:
        data = parse_json_object(text.encode(errors="surrogatepass"), WHERE_ANSWER)
    except MalformedJson as e:
        raise WhereError(f"its answer {e.problem.removeprefix('it ')}") from None
    bus, attach = data.get("bus"), data.get("attach")
    if not isinstance(bus, str) or not isinstance(attach, str):
        raise WhereError("its answer lacks 'bus' or 'attach'")
    return Where(bus, attach)


def unix_socket_path(address: str) -> str | None:
    """The file of a D-Bus address `unix:path=...` (the first such, in a list of
    addresses); None when the address has none (abstract, tcp, ...): ssh forwards
    only sockets that are files."""
    for one in address.split(";"):
        transport, _, params = one.partition(":")
        if transport != "unix":
            continue
        for pair in params.split(","):
            key, _, value = pair.partition("=")
            if key == "path" and value.startswith("/"):
                return unquote(value)  # D-Bus addresses escape bytes as %XX
    return None
