"""muxd's signals for the overview, on a D-Bus connection of its own in a thread
(muxctl's D-Bus client blocks): any signal of mux's (a pane's PropertiesChanged, its
object added or removed, PaneExited, WindowChanged, HostStateChanged...) says the
list may have changed; the feed lists again (docs/web.md#the-overview)."""

import contextlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from mux.protocol.names import BUS_NAME
from muxctl.errors import CtlError

if TYPE_CHECKING:
    from muxctl.client import MuxClient

RECEIVE_SECONDS = 0.5  # how soon stop() is noticed
RETRY_SECONDS = 1.0  # after the bus or mux went away
MATCH = f"type='signal',sender='{BUS_NAME}'"


class SignalWatch:
    def __init__(self, connect: Callable[[], "MuxClient"], notify: Callable[[], None]) -> None:
        """`notify` is called from the watch's thread: it must hand over to the loop."""
        self._connect = connect
        self._notify = notify
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="mux-signals", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        while not self._stopping.is_set():
            # (muxd or its bus away: tried again, the list said stale meanwhile)
            with contextlib.suppress(CtlError, OSError, ConnectionError):
                self._listen()
            self._notify()
            self._stopping.wait(RETRY_SECONDS)

    def _listen(self) -> None:
        from jeepney import MessageType

        client = self._connect()
        try:
            client.ask_bus("AddMatch", "s", [MATCH])
            self._notify()  # (what changed before the match was in place)
            while not self._stopping.is_set():
                try:
                    message = client.connection.receive(timeout=RECEIVE_SECONDS)
                except TimeoutError:
                    continue
                if message.header.message_type is MessageType.signal:
                    self._notify()
        finally:
            client.close()
