"""A callback every so many seconds on the event loop, from `start` until `stop`."""

import asyncio
from collections.abc import Callable


class Periodic:
    def __init__(
        self, loop: asyncio.AbstractEventLoop, interval: float, callback: Callable[[], None]
    ) -> None:
        self._loop = loop
        self._interval = interval
        self._callback = callback
        self._timer: asyncio.TimerHandle | None = None

    def start(self) -> None:
        if self._timer is None:
            self._timer = self._loop.call_later(self._interval, self._tick)

    def _tick(self) -> None:
        try:
            self._callback()
        finally:
            # Measured from the end of this round: a slow round never makes two at once.
            self._timer = self._loop.call_later(self._interval, self._tick)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
