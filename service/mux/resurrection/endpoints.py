"""The panes' `EndpointFactory`: opens each launch's application-resurrection endpoint
(mux.resurrection.endpoint), or takes over the one a previous muxd handed over."""

import asyncio
from dataclasses import dataclass
from pathlib import Path

from mux.resurrection.checkpoints import CheckpointStore
from mux.resurrection.endpoint import HELLO_TIMEOUT_SECONDS, Endpoint
from mux.system.shared_reader import SharedReader


@dataclass(frozen=True)
class Endpoints:
    """Opens launches' endpoints under `launch_dirs` (<runtime>/launch): the panes'
    EndpointFactory."""

    launch_dirs: Path
    store: CheckpointStore
    loop: asyncio.AbstractEventLoop
    hello_seconds: float = HELLO_TIMEOUT_SECONDS
    shared_reader: SharedReader | None = None  # where the listening sockets wait

    def open(self, *, invocation: str, offer: str | None, shell_launch: bool) -> Endpoint:
        return Endpoint.open(
            self.launch_dirs,
            self.loop,
            self.store,
            invocation=invocation,
            offer=offer,
            shell_launch=shell_launch,
            hello_seconds=self.hello_seconds,
            shared_reader=self.shared_reader,
        )

    def resumed(
        self, fd: int, directory: Path, *, invocation: str, offer: str | None, shell_launch: bool
    ) -> Endpoint:
        return Endpoint.resumed(
            fd,
            directory,
            self.loop,
            self.store,
            invocation=invocation,
            offer=offer,
            shell_launch=shell_launch,
            hello_seconds=self.hello_seconds,
            shared_reader=self.shared_reader,
        )
