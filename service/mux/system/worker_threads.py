"""Whether muxd may run work on a thread beside its event loop.

Only where panes start through posix_spawn (Linux): elsewhere they start through
fork + preexec_fn (mux.panes.process), and a second thread holding a lock at the
fork could deadlock the child before its exec. Where it is False, such work runs
on the loop.
"""

import asyncio
import sys
from collections.abc import Callable
from typing import TypeVar

WORKER_THREADS = sys.platform == "linux"

_Result = TypeVar("_Result")


async def off_the_loop(loop: asyncio.AbstractEventLoop, work: Callable[[], _Result]) -> _Result:
    """`work` on a worker thread where muxd may have one, else on the loop itself."""
    if WORKER_THREADS:
        return await loop.run_in_executor(None, work)
    return work()
