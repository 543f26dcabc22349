"""Where `muxctl web` listens and which names it answers for (docs/web.md#listening),
from its arguments, checked without I/O: a loopback address by default; another
address only with TLS (`--cert`, `--key`); a Unix socket (`--socket`) for a reverse
proxy. A browser reaching the server through a name the server cannot know (a proxy,
an address that is every interface's) is named by `--public-url`: its host is then
the only `Host`, and its origin the only `Origin`, the server takes (the DNS-rebinding
and cross-site checks stay whole)."""

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit


class BadListening(ValueError):
    """The arguments name no place the server may listen on; the message says why."""


@dataclass(frozen=True)
class Listening:
    address: str | None  # a TCP address; None: the Unix socket
    port: int
    socket_path: str | None
    cert: str | None
    key: str | None
    public: tuple[str, str] | None  # (scheme, host[:port]) browsers use, when given

    @property
    def tls(self) -> bool:
        return self.cert is not None

    @property
    def scheme(self) -> str:
        if self.public is not None:
            return self.public[0]
        return "https" if self.tls else "http"

    def hosts(self, bound_port: int) -> frozenset[str]:
        """The `Host` values of this server, once bound to `bound_port`."""
        names: set[str] = set()
        if self.public is not None:
            names.add(self.public[1])
        if self.address is not None and not _unspecified(self.address):
            loopback = _loopback(self.address)
            for name in ("127.0.0.1", "localhost", "::1") if loopback else (self.address,):
                names.add(f"[{name}]:{bound_port}" if ":" in name else f"{name}:{bound_port}")
        return frozenset(names)

    def link_base(self, bound_port: int) -> str:
        """Where the printed link points (no trailing slash)."""
        if self.public is not None:
            return f"{self.public[0]}://{self.public[1]}"
        assert self.address is not None
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"{self.scheme}://{host}:{bound_port}"


def plan(
    listen: str | None,
    socket_path: str | None,
    cert: str | None,
    key: str | None,
    public_url: str | None,
) -> Listening:
    if (cert is None) != (key is None):
        raise BadListening("--cert and --key go together: the certificate and its key")
    public = _public(public_url, tls=cert is not None) if public_url is not None else None
    if socket_path is not None:
        if listen is not None:
            raise BadListening("give --listen or --socket, not both")
        if public is None:
            raise BadListening(
                "--socket needs --public-url: the address browsers reach the proxy at "
                "(the only Host and Origin the server will take)"
            )
        return Listening(None, 0, socket_path, cert, key, public)
    address, port = _address(listen or "127.0.0.1:0")
    if not _loopback(address):
        if cert is None:
            raise BadListening(
                f"{address} is not a loopback address: listening where others can reach "
                "the server needs TLS (--cert and --key)"
            )
        if _unspecified(address) and public is None:
            raise BadListening(
                f"{address} is every address of this machine: name the one browsers use "
                "with --public-url"
            )
    return Listening(address, port, None, cert, key, public)


def _address(listen: str) -> tuple[str, int]:
    address, _, port_text = listen.rpartition(":")
    address = address.strip("[]")
    try:
        port = int(port_text)
        ipaddress.ip_address(address)
    except ValueError:
        raise BadListening(
            f"cannot listen on {listen!r}: give ADDR:PORT, such as 127.0.0.1:8080"
        ) from None
    if not 0 <= port <= 65535:
        raise BadListening(f"cannot listen on port {port}: ports go from 0 to 65535")
    return address, port


def _public(url: str, *, tls: bool) -> tuple[str, str]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadListening(f"--public-url {url!r} is not an http or https address")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        raise BadListening(f"--public-url {url!r}: give only the scheme, host and port")
    if tls and parts.scheme != "https":
        raise BadListening("with --cert and --key the public address is https")
    return parts.scheme, parts.netloc.lower()


def _loopback(address: str) -> bool:
    return ipaddress.ip_address(address).is_loopback


def _unspecified(address: str) -> bool:
    return ipaddress.ip_address(address).is_unspecified


def handed_over(
    family: int, name: object, cert: str | None, key: str | None, public_url: str | None
) -> Listening:
    """The plan for a socket systemd passed (mux-web.socket): the same rules as for the
    address or path it listens on."""
    if isinstance(name, str):  # AF_UNIX: its path
        return plan(None, name, cert, key, public_url)
    assert isinstance(name, tuple)
    address, port = name[0], name[1]
    shown = f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
    return plan(shown, None, cert, key, public_url)
