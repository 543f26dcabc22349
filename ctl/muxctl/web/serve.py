"""Running the web server until SIGTERM or SIGINT: bound first, then the login link
printed (and opened in a browser, through a file only the user can read, so the token
is never in a process's arguments, which other users can see)."""

import asyncio
import contextlib
import os
import signal
import ssl
import stat
import subprocess
import sys
from pathlib import Path

from aiohttp import web

from mux.system.paths import resolve_paths
from muxctl.errors import CtlError
from muxctl.web.guard import Guard
from muxctl.web.listening import Listening
from muxctl.web.server import make_app

OPENER_FILE = "web-login.html"


def serve(listening: Listening, *, open_browser: bool) -> int:
    tls = _tls(listening)
    return asyncio.run(_serve(listening, tls, open_browser))


def _tls(listening: Listening) -> ssl.SSLContext | None:
    """The server's TLS context; CtlError naming what does not load."""
    if listening.cert is None or listening.key is None:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(listening.cert, listening.key)
    except (OSError, ssl.SSLError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise CtlError(f"cannot use --cert and --key: {reason}") from None
    return context


async def _serve(listening: Listening, tls: ssl.SSLContext | None, open_browser: bool) -> int:
    from muxctl.client import connect

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    guard = Guard(frozenset(), listening.scheme)  # (its hosts once the port is known)
    app = make_app(guard, lambda: connect(autostart=False), resolve_paths().attach_socket)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        bound = await _start(runner, listening, tls)
        guard.serve_hosts(listening.hosts(bound))
        url = f"{listening.link_base(bound)}/login?token={guard.token}"
        print(url, flush=True)
        if open_browser:
            _open(url)
        await stop.wait()
    finally:
        await runner.cleanup()
    return 0


async def _start(runner: web.AppRunner, listening: Listening, tls: ssl.SSLContext | None) -> int:
    """The site started; the TCP port it is bound to (0 for a Unix socket)."""
    if listening.socket_path is not None:
        path = listening.socket_path
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                os.unlink(path)  # (a socket left by a server that is gone)
        old_mask = os.umask(0o177)  # 0600 from its creation on
        try:
            await web.UnixSite(runner, path, ssl_context=tls).start()
        finally:
            os.umask(old_mask)
        return 0
    assert listening.address is not None
    await web.TCPSite(runner, listening.address, listening.port, ssl_context=tls).start()
    return int(runner.addresses[0][1])


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
