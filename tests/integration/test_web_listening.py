"""`muxctl web` over TLS and on a Unix socket behind a reverse proxy (docs/web.md#listening):
the browser logs in over https and gets a Secure cookie; on the socket, only the proxy's
name is answered for, the socket is the user's alone, and a peer of another user is
refused even when the socket's mode would let it in."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import aiohttp
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from playwright.sync_api import expect

from tests.harness import Service
from tests.web_browser import browser_page, serving

NOBODY = 65534


def _self_signed(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert, key_file = directory / "cert.pem", directory / "key.pem"
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    key_file.chmod(0o600)
    return cert, key_file


def test_over_tls_the_cookie_is_secure(service: Service, tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    pane = service.spawn(["sh", "-c", "echo over-tls-$((6*7)); exec sleep 600"])
    service.wait_screen(pane, "over-tls-42")
    with serving(service, "--cert", str(cert), "--key", str(key)) as link:
        assert link.startswith("https://127.0.0.1:")
        with browser_page(trust_any_certificate=True) as (page, errors):
            page.goto(link)
            expect(page.locator(f'article.pane[data-pane="{pane}"] pre')).to_contain_text(
                "over-tls-42"
            )  # (the overview's WebSocket too: wss)
            cookie = next(c for c in page.context.cookies() if c["name"] == "mux_session")
            assert cookie["secure"] and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert errors == []


def test_bad_tls_files_and_addresses_are_refused(service: Service, tmp_path: Path) -> None:
    missing = service.muxctl("web", "--no-open", "--cert", "/nonexistent", "--key", "/nope")
    assert missing.returncode == 1 and "cannot use --cert and --key" in missing.stderr
    assert "Traceback" not in missing.stderr
    cert, key = _self_signed(tmp_path)
    every = service.muxctl("web", "--no-open", "--listen", "0.0.0.0:0", "--cert", str(cert))
    assert every.returncode == 2 and "go together" in every.stderr
    every = service.muxctl(
        "web", "--no-open", "--listen", "0.0.0.0:0", "--cert", str(cert), "--key", str(key)
    )
    assert every.returncode == 2 and "--public-url" in every.stderr


def _over(path: Path, host: str, link_path: str) -> tuple[int, str]:
    async def ask() -> tuple[int, str]:
        connector = aiohttp.UnixConnector(path=str(path))
        async with (
            aiohttp.ClientSession(connector=connector) as session,
            session.get(f"http://{host}{link_path}", allow_redirects=False) as answer,
        ):
            return answer.status, answer.headers.get("Set-Cookie", "")

    return asyncio.run(ask())


def test_on_a_unix_socket_for_a_reverse_proxy(service: Service) -> None:
    # (a directory another user can reach: pytest's own are the user's only)
    directory = Path(tempfile.mkdtemp(prefix="mux-web-"))
    directory.chmod(0o755)
    try:
        _through_the_socket(service, directory / "web.sock")
    finally:
        shutil.rmtree(directory)


def _through_the_socket(service: Service, path: Path) -> None:
    with serving(service, "--socket", str(path), "--public-url", "https://mux.example") as link:
        assert link.startswith("https://mux.example/login?token=")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        login = link.removeprefix("https://mux.example")
        assert _over(path, "evil.example", login)[0] == 421, "only the proxy's name"
        status, cookie = _over(path, "mux.example", login)
        assert status == 303 and "Secure" in cookie and "HttpOnly" in cookie
        # Another user, even through a socket whose mode would let it in, is refused.
        path.chmod(0o666)
        as_nobody = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        curl = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--unix-socket"]
        nobody = subprocess.run(
            [*as_nobody, *curl, str(path), "http://mux.example/"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert nobody.stdout == "403", (nobody.stdout, nobody.stderr)
