"""Network changes that may have broken or mended a link, from netlink (Linux).

A link that is up may be dead after a change (its TCP connection bound to an
address that went away), and a link that is down may come back at once: TCP's
own backoff would take seconds to notice either. So each change of interest —
an interface going up or down, an address or a route added or removed — makes
the hub check every link at once; changes that come together are handled once.
pyroute2 costs ~140 ms to import: it is imported only when a host is there to
check. Where netlink cannot be had, links heal by ssh's keepalives and their
backoff alone (logged once).
"""

import asyncio
import contextlib
import importlib
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)
# pyroute2 logs every message it parses at DEBUG: mux's own debug log would drown.
logging.getLogger("pyroute2").setLevel(logging.INFO)

EVENTS = frozenset({"RTM_NEWLINK", "RTM_NEWADDR", "RTM_DELADDR", "RTM_NEWROUTE", "RTM_DELROUTE"})
# Changes come in bursts (a link up: a link, then routes and addresses): one check.
SETTLE_SECONDS = 0.05


class NetworkWatch:
    def __init__(self, changed: Callable[[], None]) -> None:
        self._changed = changed
        self._task: asyncio.Task[None] | None = None
        self._pending: asyncio.TimerHandle | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._watch())

    async def close(self) -> None:
        task, self._task = self._task, None
        if self._pending is not None:
            self._pending.cancel()
        if task is not None:
            task.cancel()
            with contextlib.suppress(BaseException):  # what it ended with was logged
                await task

    async def _watch(self) -> None:
        try:
            # ~140 ms of imports, in a thread: the first dial and every call go on meanwhile.
            pyroute2 = await asyncio.to_thread(importlib.import_module, "pyroute2")
            route = pyroute2.AsyncIPRoute()
            await route.bind()
        except Exception as e:  # ImportError off Linux; OSError where netlink is refused
            log.info("no netlink (%s): links heal by ssh keepalives and backoff alone", e)
            return
        try:
            while True:
                async for message in route.get():
                    self._seen(message)
        except Exception as e:  # a netlink overflow, say: links heal without it
            log.warning("netlink watch ended (%s): links heal by keepalives and backoff", e)
        finally:
            route.close()

    def _seen(self, message: Any) -> None:
        if message.get("event") in EVENTS and self._pending is None:
            loop = asyncio.get_running_loop()
            self._pending = loop.call_later(SETTLE_SECONDS, self._settled)

    def _settled(self) -> None:
        self._pending = None
        log.debug("the network changed: checking every link")
        self._changed()
