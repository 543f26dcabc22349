"""Running the web server until SIGTERM or SIGINT: bound first, then the login link
printed (and opened in a browser, through a file only the user can read, so the token
is never in a process's arguments, which other users can see)."""

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

from aiohttp import web

from mux.system.paths import resolve_paths
from muxctl.web.guard import Guard, own_hosts
from muxctl.web.server import make_app

OPENER_FILE = "web-login.html"


def serve(address: str, port: int, *, open_browser: bool) -> int:
    return asyncio.run(_serve(address, port, open_browser))


async def _serve(address: str, port: int, open_browser: bool) -> int:
    from muxctl.client import connect

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    guard = Guard(frozenset())  # (its hosts once the port is known)
    app = make_app(guard, lambda: connect(autostart=False), resolve_paths().attach_socket)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, address, port).start()
        bound = runner.addresses[0][1]
        guard.serve_hosts(own_hosts(address, bound))
        host = f"[{address}]" if ":" in address else address
        url = f"http://{host}:{bound}/login?token={guard.token}"
        print(url, flush=True)
        if open_browser:
            _open(url)
        await stop.wait()
    finally:
        await runner.cleanup()
    return 0


def _open(url: str) -> None:
    """Open `url` in the user's browser by way of a 0600 file that redirects to it."""
    opener = Path(resolve_paths().runtime) / OPENER_FILE
    fd = os.open(opener, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(f'<!doctype html><meta http-equiv="refresh" content="0;url={url}">\n')
    try:
        subprocess.Popen(
            ["xdg-open", opener.as_uri()], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
    except OSError as e:
        print(f"muxctl: cannot open a browser ({e.strerror}): open the link above", file=sys.stderr)
