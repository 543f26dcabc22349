"""Whether muxd may run work on a thread beside its event loop.

Only where panes start through posix_spawn (Linux): elsewhere they start through
fork + preexec_fn (mux.panes.process), and a second thread holding a lock at the
fork could deadlock the child before its exec. Where it is False, such work runs
on the loop.
"""

import sys

WORKER_THREADS = sys.platform == "linux"
