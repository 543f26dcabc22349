"""`muxctl web --login`: a fresh login link of the `muxctl web` already running (often
mux-web.service, whose output is the journal, where no token goes), opened in the
browser or printed on this terminal (docs/web.md#logging-in). With none running, the
service is started (when systemd's user manager is there) and its link waited for."""

import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

from muxctl.errors import EXIT_FAILURE, CtlError
from muxctl.systemd_user import manager_reachable, systemctl
from muxctl.web import login_file
from muxctl.web.serve import open_page

START_SECONDS = 15.0
POLL_SECONDS = 0.1


def log_in(*, open_browser: bool) -> int:
    page = login_file.login_file()
    link = _live(login_file.read(page))
    if link is None:
        if not manager_reachable():
            raise CtlError(
                "no muxctl web is running: start one (muxctl web), or enable mux-web.socket",
                EXIT_FAILURE,
            )
        started = systemctl("start", "mux-web.service")
        if started.returncode != 0:
            raise CtlError(f"cannot start mux-web.service: {started.stderr.strip()}")
        link = _waited_for(page)
    if open_browser:
        open_page(page)
    else:
        print(link)
    return 0


def _waited_for(page: Path) -> str:
    deadline = time.monotonic() + START_SECONDS
    while (link := _live(login_file.read(page))) is None:
        if time.monotonic() > deadline:
            raise CtlError("mux-web.service started but wrote no login link (see its status)")
        time.sleep(POLL_SECONDS)
    return link


def _live(link: str | None) -> str | None:
    """`link` if a server answers where it points (a page left by a server that died is
    not); a proxy's address is taken as it is."""
    if link is None:
        return None
    parts = urlsplit(link)
    host, port = parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)
    try:
        is_local = host in ("localhost", "::1") or host.startswith("127.")
        if not is_local:
            return link
        with socket.create_connection((host, port), timeout=1):
            return link
    except OSError:
        return None
