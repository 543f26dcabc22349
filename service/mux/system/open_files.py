"""The open-files limit: raised for muxd, given back to the panes' programs.

Every pane holds its terminal's master and a pidfd, so the soft limit a service
manager hands out (1024 under systemd, 256 under launchd) would stop mux near 500
panes (or 120) with "too many open files". muxd raises its soft limit to the hard
one at start, as systemd asks of a service that needs many files (it must not use
select(2): asyncio uses epoll or kqueue). The programs it starts get the limit muxd
was started with: some of them use select(2), or size tables by the limit.
"""

import logging
import resource
import sys

log = logging.getLogger(__name__)

# Where the hard limit is "unlimited", macOS refuses a soft limit above OPEN_MAX.
_MACOS_OPEN_MAX = 10240

Limits = tuple[int, int]


class OpenFilesLimit:
    """The limit muxd was started with, and raising it; one per process."""

    def __init__(self) -> None:
        self._children: Limits | None = None

    def raise_for_service(self, children: Limits | None) -> None:
        """Raise the soft limit to the hard one (logged, never fatal: mux still runs
        with fewer panes). `children`: the limit the programs get, when an older muxd
        says (an upgrade: the limit was raised before this program started); None:
        the limit found now."""
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        self._children = children if children is not None else (soft, hard)
        wanted = hard
        if hard == resource.RLIM_INFINITY and sys.platform == "darwin":
            wanted = _MACOS_OPEN_MAX
        if wanted == soft or (soft != resource.RLIM_INFINITY and wanted < soft):
            return
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        except (ValueError, OSError) as e:
            log.warning("the open-files limit stays at %d (raising it failed: %s)", soft, e)
            return
        log.debug("open-files limit raised from %d to %d", soft, wanted)

    def for_children(self) -> Limits | None:
        """What a program muxd starts should have (None: what muxd has)."""
        if self._children is None:
            return None
        if resource.getrlimit(resource.RLIMIT_NOFILE) == self._children:
            return None
        return self._children


SERVICE_OPEN_FILES = OpenFilesLimit()
