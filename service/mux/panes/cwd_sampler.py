"""Reading every running pane's working directory from the process table, now and then.

A process capture (panes/cwd.py; docs/shell-integration.md#working-directory-sources-and-precedence)
of each running pane every `interval` seconds, from `start` until `stop`; Linux
reads /proc, elsewhere there is nothing to read.
"""

import asyncio
from collections.abc import Callable, Iterable

from mux.panes.pane import Pane
from mux.panes.periodic import Periodic
from mux.system.proctree import ProcessTree


class CwdSampler:
    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        interval: float,
        panes: Callable[[], Iterable[Pane]],
    ) -> None:
        self._panes = panes
        self._timer = Periodic(loop, interval, self.sample)

    def start(self) -> None:
        self._timer.start()

    def sample(self) -> None:
        panes = list(self._panes())
        if not any(pane.is_running for pane in panes):
            return
        processes = ProcessTree.read()
        if processes is None:
            return
        for pane in panes:
            pane.sample_cwd(processes)

    def stop(self) -> None:
        self._timer.stop()
