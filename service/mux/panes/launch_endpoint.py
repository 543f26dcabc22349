"""A launch's application-resurrection endpoint, as the panes see it.

The panes layer sits below `mux.resurrection`: it names what it needs here and
the lifecycle hands it an `EndpointFactory` (`mux.resurrection.endpoint.Endpoints`).
"""

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mux.panes.pane import Pane


class LaunchEndpoint(Protocol):
    @property
    def path(self) -> Path:
        """The socket, given to the launch as APPLICATION_RESURRECTION_SOCKET."""
        ...

    @property
    def directory(self) -> Path: ...
    @property
    def offer(self) -> str | None:
        """The reference the launch's application gets back (a restore), if any."""
        ...

    @property
    def shell_launch(self) -> bool: ...
    @property
    def stopped(self) -> bool: ...
    @property
    def registrations(self) -> int:
        """Applications connected and registered: resources a kill would close."""
        ...

    def fileno(self) -> int: ...
    def bind(self, launch: "Pane") -> None:
        """The pane whose program the endpoint serves, once it runs."""
        ...

    def withdraw_offer(self) -> None: ...
    def close(self) -> None: ...
    async def quiesce(self) -> None:
        """Every acknowledged checkpoint is in its pane, and no new one is taken."""
        ...


class EndpointFactory(Protocol):
    def open(self, *, invocation: str, offer: str | None, shell_launch: bool) -> LaunchEndpoint:
        """A new endpoint; OSError if it cannot be made (nothing is left behind)."""
        ...

    def resumed(
        self, fd: int, directory: Path, *, invocation: str, offer: str | None, shell_launch: bool
    ) -> LaunchEndpoint:
        """The endpoint a previous muxd handed over, on the socket it left open."""
        ...
