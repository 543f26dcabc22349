"""mux-web.socket and mux-web.service under a real `systemd --user` (docs/web.md#the-units):
written by `muxctl install` and verified, off until enabled, the first connection starts
the server on the socket systemd holds, `muxctl web --login` gives a fresh one-time link,
and no token ever reaches the service's output."""

from __future__ import annotations

import http.client
import socket
import stat
from urllib.parse import urlsplit

from tests.harness import wait_for
from tests.systemd.conftest import UserSystemd


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _get(port: int, path: str) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", path)
    return connection.getresponse()


def test_the_web_units_start_on_first_use_and_log_no_token(user_systemd: UserSystemd) -> None:
    sd = user_systemd
    installed = sd.muxctl("install")
    assert installed.returncode == 0, installed.stderr
    unit_dir = sd.home / ".config" / "systemd" / "user"
    sd.verify(unit_dir / "mux-web.service", unit_dir / "mux-web.socket")
    assert "web --no-open" in (unit_dir / "mux-web.service").read_text()
    assert sd.show("mux-web.socket", "UnitFileState") == "disabled", "off by default"
    port = _free_port()  # (not 8383: another test run, or a user's, may hold it)
    drop_in = unit_dir / "mux-web.socket.d"
    drop_in.mkdir()
    (drop_in / "port.conf").write_text(f"[Socket]\nListenStream=\nListenStream=127.0.0.1:{port}\n")
    output = sd.root / "mux-web.out"  # (the service's output, which a journal would keep)
    (unit_dir / "mux-web.service.d").mkdir()
    (unit_dir / "mux-web.service.d" / "output.conf").write_text(
        f"[Service]\nStandardOutput=file:{output}\nStandardError=file:{output}\n"
    )
    sd.systemctl("daemon-reload")
    sd.systemctl("start", "mux-web.socket")
    assert sd.show("mux-web.service", "ActiveState") == "inactive"
    assert _get(port, "/").status == 401, "the first connection started the server"
    sd.wait_state("mux-web.service", "active")
    login = sd.muxctl("web", "--login", "--no-open")
    assert login.returncode == 0, login.stderr
    link = login.stdout.strip()
    assert link.startswith(f"http://127.0.0.1:{port}/login?token="), link
    page = sd.runtime / "mux" / "web-login.html"
    assert stat.S_IMODE(page.stat().st_mode) == 0o600
    parts = urlsplit(link)
    assert _get(port, f"{parts.path}?{parts.query}").status == 303
    again = sd.muxctl("web", "--login", "--no-open").stdout.strip()
    assert again != link and again.startswith(f"http://127.0.0.1:{port}/login?token=")
    said = output.read_text()
    assert f"serving http://127.0.0.1:{port}/" in said and "muxctl web --login" in said
    assert "token" not in said and parts.query.split("=", 1)[1] not in sd.journal()
    sd.systemctl("stop", "mux-web.service", "mux-web.socket")
    wait_for(lambda: not page.exists(), what="the login page gone with the server")
