"""Reading every running pane's working directory from the process table, now and then.

A process capture (panes/cwd.py; docs/shell-integration.md#working-directory-sources-and-precedence)
of each running pane every `interval` seconds, from `start` until `stop`; Linux
reads /proc, elsewhere there is nothing to read. The process table is read on
the event loop a few hundred processes at a time, the loop running in between:
with hundreds of panes that is hundreds of files, tens of milliseconds in which
the loop would answer no key and no call if read in one go. Not on a worker
thread, as before: parsing in Python, it held the interpreter's lock, and each of
the loop's reads of a busy pane gave it back and waited up to 5 ms to have it
again (loop callbacks of 1-2 ms took 24-34 ms under 500 busy panes; with no
sampling the echo p99 fell from 76-127 ms to 31-44).
"""

import asyncio
from collections.abc import Callable, Iterable

from mux.panes.pane import Pane
from mux.panes.periodic import Periodic
from mux.system.proctree import ProcessTree
from mux.system.steps import in_turns

# About 1 ms of the loop a step (~7 us to read and parse a process's stat).
PROCESSES_A_STEP = 150


class CwdSampler:
    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        interval: float,
        panes: Callable[[], Iterable[Pane]],
    ) -> None:
        self._loop = loop
        self._panes = panes
        self._timer = Periodic(loop, interval, self._start_round)
        self._round: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._timer.start()

    def _start_round(self) -> None:
        if self._round is None or self._round.done():  # never two at once
            self._round = self._loop.create_task(self.sample())

    async def sample(self) -> None:
        """A process capture of every running pane, now."""
        if not any(pane.is_running for pane in self._panes()):
            return
        processes = await in_turns(ProcessTree.read_in_steps(PROCESSES_A_STEP))
        if processes is None:
            return
        # The panes as they are now: one started meanwhile is not in the table read,
        # and is then taken as its own foreground (Pane.sample_cwd).
        for pane in list(self._panes()):
            pane.sample_cwd(processes)

    def stop(self) -> None:
        self._timer.stop()
        if self._round is not None:
            self._round.cancel()
