"""The floor of a D-Bus call: a dbus-fast service on muxd's bus answering the same
methods with the same shapes of reply and doing nothing else, in a process of its own
as muxd is. A bench calls it beside muxd, in the same run: what is left between the
two is muxd's own cost; what the floor itself takes (dbus-fast on both ends, the
bus daemon between them, the machine's load) no service of this kind can go below.

`python3 bench/floor.py ADDRESS`: serves until killed; it copies muxd's `ListPanes`
reply (and one pane's screen) once at start, so that its answers are as large.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from typing import Any

from dbus_fast import DBusError
from dbus_fast.aio import MessageBus
from dbus_fast.service import ServiceInterface

from common import (
    MANAGER_INTERFACE,
    REAL_PYTHON,
    ROOT_PATH,
    TIMEOUT,
    call,
    connect,
    name_has_owner,
)
from mux.dbus.method_signatures import manager_method

FLOOR_NAME = "org.mux.Bench.Floor"
SCREEN = ["x" * 80] * 24


class Floor(ServiceInterface):
    """Declared the way muxd declares them (manager_method: the signatures of
    MANAGER_METHODS)."""

    def __init__(self, listing: list[dict[str, Any]], screen: list[str]) -> None:
        super().__init__(MANAGER_INTERFACE)
        self._listing = listing
        self._screen = screen

    @manager_method
    def ListPanes(self) -> list[dict[str, Any]]:
        return self._listing

    @manager_method
    def GetScreen(self, pane_id: int) -> list[str]:
        return self._screen

    @manager_method
    def SendInput(self, pane_id: int, data: bytes) -> None:
        return None

    @manager_method
    def KillIf(self, pane_id: int, instance: bytes, conditions: list[str]) -> None:
        raise DBusError("org.mux.Mux1.Error.PreconditionFailed", "not this instance")


async def serve(address: str) -> None:
    bus = await connect(address)
    (listing,) = await call(bus, "ListPanes")
    screen = SCREEN
    if listing:
        (screen,) = await call(bus, "GetScreen", "t", [listing[0]["id"].value])
    bus.export(ROOT_PATH, Floor(listing, screen))
    await bus.request_name(FLOOR_NAME)
    await asyncio.Event().wait()


class FloorService:
    """The floor in its own process, for as long as the `with` block."""

    def __init__(self, address: str, env: dict[str, str]) -> None:
        self._argv = [REAL_PYTHON, __file__, address]
        self._env = env
        self._process: subprocess.Popen[bytes] | None = None

    async def start(self, client: MessageBus) -> None:
        self._process = subprocess.Popen(self._argv, env=self._env)
        deadline = time.monotonic() + TIMEOUT
        while not await name_has_owner(client, FLOOR_NAME):
            if time.monotonic() > deadline or self._process.poll() is not None:
                raise RuntimeError("the floor service did not start")
            await asyncio.sleep(0.01)

    def stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait()


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1]))
