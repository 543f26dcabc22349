"""The window view's attach connections: one per pane shown, each at its region's
size, and each made again when a graceful upgrade of mux cuts it (the new muxd
accepts on the same socket; until it runs, a connection waits in its backlog)."""

import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from mux.protocol import attach as proto
from muxctl.attaching import RECONNECT_TIMEOUT_SECONDS
from muxctl.errors import CtlError, SocketRefused
from muxctl.pane_link import PaneLink
from muxctl.prefix_keys import Pasted, Typed

Size = tuple[int, int]


class PaneLinks:
    def __init__(self, socket_path: Path, *, read_only: bool = False) -> None:
        self._path = socket_path
        self.read_only = read_only  # every link only watches
        self._links: dict[int, PaneLink] = {}
        self._to_reattach: dict[int, Size] = {}  # cut by an upgrade: pane -> its size
        self.reattach_until: float | None = None  # an upgrade is under way until then

    def __iter__(self) -> Iterator[PaneLink]:
        return iter(list(self._links.values()))

    def get(self, pane: int) -> PaneLink | None:
        return self._links.get(pane)

    def give(self, pane: int, event: Typed | Pasted) -> bool:
        """Keys typed, or text pasted, into `pane` (a watcher sends nothing); False when
        they go nowhere: its program has ended (remain_on_exit)."""
        link = self._links.get(pane)
        if link is None or link.ended:
            return False
        if self.read_only:
            return True
        if isinstance(event, Typed):
            link.say(proto.Input(event.data))
        else:
            link.paste(event.data.decode(errors="replace"))
        return True

    def by_fd(self) -> dict[int, PaneLink]:
        """The links still in conversation, by their sockets."""
        return {link.fileno(): link for link in self._links.values() if not link.ended}

    def open(self, pane: int, size: Size) -> None:
        """A link to `pane` (0: the last used pane, named once attached: `named`)."""
        link = PaneLink(self._path, pane, size, read_only=self.read_only)
        link.connect()
        self._links[pane] = link

    def named(self, pane: int) -> None:
        """The link opened for pane 0 is attached to `pane`."""
        self._links[pane] = self._links.pop(0)

    def match(self, sizes: Mapping[int, Size]) -> None:
        """A link to each pane of `sizes`, at that size; the others closed."""
        for pane in list(self._links):
            if pane not in sizes:
                self._links.pop(pane).close()
        self._to_reattach = {p: sizes[p] for p in self._to_reattach if p in sizes}
        for pane, size in sizes.items():
            if pane in self._to_reattach:
                self._to_reattach[pane] = size  # (made again in `reattach`)
            elif (link := self._links.get(pane)) is not None:
                link.resize(*size)
            else:
                self.open(pane, size)

    # -- across an upgrade -------------------------------------------------------------

    def interrupted(self, link: PaneLink, size: Size) -> None:
        """`link` was cut by an upgrade: made again by `reattach`."""
        self._links.pop(link.pane).close()
        self._to_reattach[link.pane] = size
        self.reattach_until = time.monotonic() + RECONNECT_TIMEOUT_SECONDS

    @property
    def reattaching(self) -> bool:
        return bool(self._to_reattach)

    def reattach(self) -> None:
        """Each link cut, made again if mux's socket takes it; CtlError once mux has not
        come back in time."""
        assert self.reattach_until is not None
        for pane, size in sorted(self._to_reattach.items()):
            try:
                self.open(pane, size)
            except SocketRefused:
                raise  # not mux coming back: a socket that is not the user's
            except CtlError:
                if time.monotonic() > self.reattach_until:
                    raise CtlError("mux did not come back after its upgrade") from None
                continue
            del self._to_reattach[pane]

    def upgrade_over(self) -> None:
        """mux answers again and every link is back."""
        if not self._to_reattach:
            self.reattach_until = None

    def detach(self) -> None:
        """Every link says DETACH (each ends once DETACHED comes)."""
        for link in self._links.values():
            link.detach()

    def close(self) -> None:
        for link in self._links.values():
            link.close()
