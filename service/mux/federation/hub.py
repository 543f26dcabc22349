"""The hub's hosts and their links: what AddHost, RemoveHost and ListHosts act on."""

import asyncio
import hashlib
import hmac
import logging
import secrets
from dataclasses import dataclass
from typing import Protocol

from mux.config import Settings
from mux.federation.host_book import Host, HostBook
from mux.federation.ledger import HubLedger
from mux.federation.link import Link
from mux.federation.network_watch import NetworkWatch
from mux.protocol.errors import InvalidArgument, Unavailable
from mux.protocol.hosts import HUB_ID_BYTES, HostState, check_host_name
from mux.system.paths import Paths

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HostEntry:
    """One host as ListHosts shows it."""

    name: str
    destination: str
    state: HostState
    features: int
    last_error: str


def link_id(hub_id: bytes, host: str) -> bytes:
    """What the hub registers as with one satellite: derived from its own id for that
    host alone, so that no satellite learns what would speak for the hub elsewhere."""
    return hmac.new(hub_id, b"mux-link:" + host.encode(), hashlib.sha256).digest()[:HUB_ID_BYTES]


class HostListener(Protocol):
    """Who hears of the hosts: the control plane (host objects, HostStateChanged)."""

    def host_added(self, name: str) -> None: ...

    def host_removed(self, name: str) -> None: ...

    def host_state_changed(self, name: str, state: str) -> None: ...


class Hub:
    def __init__(
        self,
        settings: Settings,
        paths: Paths,
        hub_id: bytes | None = None,
        ledger: HubLedger | None = None,
    ) -> None:
        """`hub_id`, `ledger`: this hub's id and the spawns it relayed, kept across an
        upgrade (None: a cold start mints a new id, with an empty ledger)."""
        self._settings = settings
        self._paths = paths
        self._book = HostBook(settings, paths.hosts_file)
        self.hub_id = hub_id if hub_id is not None else secrets.token_bytes(HUB_ID_BYTES)
        self.ledger = ledger if ledger is not None else HubLedger()
        self._links: dict[str, Link] = {}
        self._closing: set[str] = set()
        self._listener: HostListener | None = None
        self._network = NetworkWatch(self.check_all)

    def listen(self, listener: HostListener) -> None:
        self._listener = listener

    def start(self) -> None:
        """Read the hosts and dial each that has no link (in the background)."""
        self._book.load()
        for host in self._book.hosts():
            if host.name in self._links:
                continue
            self._open(host)
            if self._listener is not None:
                self._listener.host_added(host.name)

    def names(self) -> list[str]:
        return sorted(self._links)

    def add(self, name: str, destination: str) -> None:
        if name in self._closing:
            raise Unavailable(f"host {name!r} is still being removed; add it again in a moment")
        self._open(self._book.add(name, destination))
        log.info("host %s added (%s)", name, destination)
        if self._listener is not None:
            self._listener.host_added(name)

    async def remove(self, name: str) -> None:
        self._book.remove(check_host_name(name))
        link = self._links.pop(name, None)
        if self._listener is not None:
            self._listener.host_removed(name)
        if link is not None:
            self._closing.add(name)  # its directory is the name's until it is gone
            try:
                await link.close()
            finally:
                self._closing.discard(name)
        log.info("host %s removed", name)

    def entries(self) -> list[HostEntry]:
        return [
            HostEntry(name, link.host.destination, link.state, link.features, link.last_error)
            for name, link in sorted(self._links.items())
        ]

    def link(self, name: str) -> Link:
        link = self._links.get(name)
        if link is None:
            raise InvalidArgument(f"there is no host {name[:80]!r} (muxctl hosts lists them)")
        return link

    def check_all(self) -> None:
        """The network changed (a link came up, an address or route was added)."""
        for link in self._links.values():
            link.check_now()

    async def close(self) -> None:
        links, self._links = list(self._links.values()), {}
        await asyncio.gather(*(link.close() for link in links))
        await self._network.close()

    def _open(self, host: Host) -> None:
        link = Link(
            host,
            self._settings.ssh_command,
            self._paths.host_dir(host.name),
            link_id(self.hub_id, host.name),
            self._link_changed,
        )
        self._links[host.name] = link
        link.start()
        self._network.start()

    def _link_changed(self, link: Link) -> None:
        if self._listener is not None and self._links.get(link.host.name) is link:
            self._listener.host_state_changed(link.host.name, str(link.state))
