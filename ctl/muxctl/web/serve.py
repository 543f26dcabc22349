"""Running the web server until SIGTERM or SIGINT (docs/web.md): bound first (or on the
socket systemd handed over: mux-web.socket), then the login link kept fresh in a page
only the user can read (muxctl.web.login_file), printed when run by hand but never by
a service (its output is a log), and opened in a browser through that page (the token is never
in a process's arguments, which other users can see)."""

import asyncio
import contextlib
import os
import signal
import socket
import ssl
import stat
import subprocess
import sys
from pathlib import Path

from aiohttp import web

from mux.system.listen_fds import listen_fds
from mux.system.paths import resolve_paths
from muxctl.errors import CtlError
from muxctl.web import login_file
from muxctl.web.guard import TOKEN_SECONDS, Guard
from muxctl.web.listening import Listening
from muxctl.web.server import make_app


def inherited_socket() -> socket.socket | None:
    """The listening socket systemd passed (mux-web.socket), if any."""
    activation = listen_fds().activation
    if not activation:
        return None
    fd, _name = activation[0]
    return socket.socket(fileno=fd)


def serve(listening: Listening, *, open_browser: bool, sock: socket.socket | None) -> int:
    tls = _tls(listening)
    return asyncio.run(_serve(listening, tls, open_browser, sock))


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


async def _serve(
    listening: Listening, tls: ssl.SSLContext | None, open_browser: bool, sock: socket.socket | None
) -> int:
    from muxctl.client import connect

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    guard = Guard(frozenset(), listening.scheme)  # (its hosts once the port is known)
    app = make_app(guard, lambda: connect(autostart=False), resolve_paths().attach_socket)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    page = login_file.login_file()
    try:
        bound = await _start(runner, listening, tls, sock)
        guard.serve_hosts(listening.hosts(bound))
        base = listening.link_base(bound)

        def keep_link() -> None:
            login_file.write(page, f"{base}/login?token={guard.token}")

        guard.on_renewed = keep_link
        keep_link()
        renewing = asyncio.create_task(_renew_hourly(guard))
        if _under_a_service_manager():
            print(f"muxctl web: serving {base}/ (log in: muxctl web --login)", flush=True)
        else:
            print(f"{base}/login?token={guard.token}", flush=True)
        if open_browser:
            open_page(page)
        await stop.wait()
        renewing.cancel()
    finally:
        login_file.remove(page, guard.token)
        await runner.cleanup()
    return 0


async def _renew_hourly(guard: Guard) -> None:
    """A fresh link before the last one goes void (one unused for an hour)."""
    while True:
        await asyncio.sleep(TOKEN_SECONDS * 0.9)
        guard.renew()


def _under_a_service_manager() -> bool:
    """Whether this runs as a service (systemd sets INVOCATION_ID, and JOURNAL_STREAM
    when the output is the journal): what it prints is kept in a log then, where a token
    must never go."""
    return bool(os.environ.get("INVOCATION_ID") or os.environ.get("JOURNAL_STREAM"))


async def _start(
    runner: web.AppRunner,
    listening: Listening,
    tls: ssl.SSLContext | None,
    sock: socket.socket | None,
) -> int:
    """The site started; the TCP port it is bound to (0 for a Unix socket)."""
    if sock is not None:
        await web.SockSite(runner, sock, ssl_context=tls).start()
        return listening.port
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


def open_page(page: Path) -> None:
    """The login page opened in the user's browser (xdg-open)."""
    try:
        subprocess.Popen(
            ["xdg-open", page.as_uri()], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
    except OSError as e:
        print(f"muxctl: cannot open a browser ({e.strerror}): open the link above", file=sys.stderr)
