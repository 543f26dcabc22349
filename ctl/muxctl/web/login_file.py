"""The login link of a running `muxctl web`, kept in `<runtime>/web-login.html`: a page
of mode 0600 that redirects to it (docs/web.md#logging-in). The server keeps a fresh
one-time link there (a new one after each login, and each hour); `muxctl web --login`
and the browser opened by `muxctl web` read it. So the token never goes into a
process's arguments (which other users can read) or into a log."""

import os
import re
import stat
from pathlib import Path

from mux.system.paths import resolve_paths
from muxctl.errors import CtlError

NAME = "web-login.html"
MAX_BYTES = 4096
_LINK = re.compile(r'content="0;url=(https?://[^"\s<>]{1,2000})"')


def login_file() -> Path:
    return Path(resolve_paths().runtime) / NAME


def write(path: Path, url: str) -> None:
    """The page redirecting to `url`, the user's only (0600, never through a link)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as out:
        os.fchmod(fd, 0o600)  # (a file left with another mode is the user's own again)
        out.write(f'<!doctype html><meta http-equiv="refresh" content="0;url={url}">\n')


def read(path: Path) -> str | None:
    """The link in the page; None when there is no page. CtlError when the page is not
    the user's own (another user's file, a link, a mode others can read) or holds no
    link: nothing from it is opened then."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise CtlError(f"cannot read the web login page ({e.strerror})") from None
    with os.fdopen(fd, "rb") as page:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            raise CtlError("the web login page is not a file of this user's alone: not opened")
        text = page.read(MAX_BYTES).decode("utf-8", errors="replace")
    found = _LINK.search(text)
    if found is None:
        raise CtlError("the web login page holds no login link")
    return found.group(1)


def remove(path: Path, token: str) -> None:
    """The page gone, if it is still this server's (another may have written its own)."""
    try:
        if token in (read(path) or ""):
            path.unlink()
    except (CtlError, OSError):
        pass
