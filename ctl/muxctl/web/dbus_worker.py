"""muxd over D-Bus for the web server: muxctl's client blocks, so every call is made
from one worker thread, never from the event loop (a slow answer holds no page)."""

import asyncio
import concurrent.futures
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from muxctl.errors import CtlError

if TYPE_CHECKING:
    from muxctl.client import MuxClient

T = TypeVar("T")


class DbusWorker:
    def __init__(self, client_factory: Callable[[], "MuxClient"]) -> None:
        """`client_factory` connects; it is called in the worker thread."""
        self._factory = client_factory
        self._client: MuxClient | None = None
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="dbus")

    async def ask(self, question: Callable[["MuxClient"], T]) -> T:
        """`question(client)`'s answer; CtlError when muxd does not give one (the next
        question connects anew: muxd may be back)."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, self._ask, question)

    def _ask(self, question: Callable[["MuxClient"], T]) -> T:
        if self._client is None:
            self._client = self._factory()
        try:
            return question(self._client)
        except CtlError:
            self._client.close()
            self._client = None
            raise

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        if self._client is not None:
            self._client.close()
