"""The Debian 12 package (packaging/debian/, built by packaging/build-deb): lintian
clean, installed with apt-get, used by an unprivileged user on mux's private bus,
upgraded under a running muxd (postinst has it re-execute itself: its panes survive
and it runs the new files), and purged without a trace.

As root only (apt-get into this machine's system, undone at the end); CI runs as root.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness import pid_alive, wait_for
from tests.packaging.installed_files import DEBIAN_ZSH_COMPLETION, SYSTEM_FILES

ROOT = Path(__file__).resolve().parents[2]
USER = 65534  # nobody: an account with no home and no session of its own
VERSION = "0.1.0-1"
NEXT_VERSION = "0.1.0-2"
INSTALLED = (
    *SYSTEM_FILES,
    DEBIAN_ZSH_COMPLETION,
    "/usr/lib/mux/pyvenv.cfg",
    "/usr/share/doc/mux/copyright",
)
SOCKET_LINK = Path("/etc/systemd/user/sockets.target.wants/mux.socket")

pytestmark = pytest.mark.timeout(600)


def _run(
    argv: list[str], env: dict[str, str] | None = None, cwd: str | None = None
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        argv, capture_output=True, text=True, timeout=300, env=env, cwd=cwd, check=False
    )
    if result.returncode != 0:
        raise AssertionError(
            f"{' '.join(argv)} exited {result.returncode}:\n{result.stdout[-3000:]}\n"
            f"{result.stderr[-3000:]}"
        )
    return result


def _apt(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return _run(["apt-get", "-y", "-q", *args], env=env)


def _installed() -> bool:
    status = subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", "mux"], capture_output=True, text=True, check=False
    )
    return "ok installed" in status.stdout


def _package_muxds() -> list[int]:
    """The muxds running from the package's venv, whoever started them."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[0].startswith(b"/usr/lib/mux/bin/python") and (
            b"/usr/bin/muxd" in argv or b"mux" in argv
        ):
            found.append(int(proc.name))
    return found


class User:
    """The unprivileged user who runs mux from the package, with XDG dirs of its own."""

    def __init__(self, root: Path) -> None:
        self.home = root / "home"
        self.runtime = root / "run"
        for directory in (self.home, self.runtime):
            directory.mkdir(mode=0o700)
            os.chown(directory, USER, USER)

    def run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = [
            f"HOME={self.home}",
            f"XDG_RUNTIME_DIR={self.runtime}",
            "PATH=/usr/bin:/bin",
            "LANG=C.UTF-8",
        ]
        command = ["setpriv", f"--reuid={USER}", f"--regid={USER}", "--clear-groups"]
        command += ["env", "-i", *env, *argv]
        if check:
            return _run(command, cwd="/")
        return subprocess.run(
            command, capture_output=True, text=True, timeout=60, cwd="/", check=False
        )

    def screen(self, pane: str) -> str:
        return self.run("muxctl", "capture", pane, check=False).stdout


@pytest.fixture(scope="module")
def debs() -> Iterator[tuple[Path, Path, str]]:
    """The package as built (with lintian's verdict), and the same source rebuilt with
    a higher version (the upgrade replaces every file under a running muxd)."""
    if os.geteuid() != 0:
        pytest.skip("the .deb test installs into this machine's system: it needs root")
    out = Path(tempfile.mkdtemp(prefix="mux-deb-"))
    try:
        build_deb = str(ROOT / "packaging" / "build-deb")
        built = _run([build_deb, str(out)])
        (deb,) = out.glob(f"mux_{VERSION}_*.deb")
        _run([build_deb, "--version", NEXT_VERSION, "--no-lintian", str(out)])
        (rebuilt,) = out.glob(f"mux_{NEXT_VERSION}_*.deb")
        yield deb, rebuilt, built.stdout + built.stderr
    finally:
        shutil.rmtree(out, ignore_errors=True)


@pytest.fixture
def user() -> Iterator[User]:
    root = Path(tempfile.mkdtemp(prefix="mux-deb-user-"))
    root.chmod(0o755)
    try:
        yield User(root)
    finally:
        for pid in _package_muxds():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)
        if _installed():
            _apt("purge", "mux")
        shutil.rmtree(root, ignore_errors=True)


def test_the_package_is_lintian_clean(debs: tuple[Path, Path, str]) -> None:
    """build-deb ran lintian --fail-on error,warning (it fails otherwise): nothing
    but information tags is left, and each override is justified in the package."""
    _deb, _rebuilt, output = debs
    tags = [line for line in output.splitlines() if line[:3] in ("E: ", "W: ")]
    assert tags == []
    overrides = (ROOT / "packaging" / "debian" / "mux.lintian-overrides").read_text()
    for block in overrides.strip().split("\n\n"):
        assert block.startswith("#"), f"an override without its reason:\n{block}"


def test_install_use_upgrade_under_a_running_muxd_and_purge(
    debs: tuple[Path, Path, str], user: User
) -> None:
    deb, rebuilt, _output = debs
    assert not _installed(), "mux was installed before the test"
    _apt("install", str(deb))
    for path in INSTALLED:
        assert os.path.lexists(path), path
    # mux.socket is enabled for every user; mux.service is not (it starts on demand).
    assert SOCKET_LINK.resolve() == Path("/usr/lib/systemd/user/mux.socket")
    assert not Path("/etc/systemd/user/default.target.wants/mux.service").exists()

    assert user.run("muxd", "--version").stdout.strip() == "muxd 0.1.0"
    assert user.run("man", "-w", "muxctl").stdout.strip() == "/usr/share/man/man1/muxctl.1.gz"
    completion = "source /usr/share/bash-completion/completions/muxctl; complete -p muxctl"
    assert "_shtab_muxctl muxctl" in user.run("bash", "--norc", "-c", completion).stdout
    user.run(
        "systemd-analyze",
        "--user",
        "verify",
        "/usr/lib/systemd/user/mux.service",
        "/usr/lib/systemd/user/mux.socket",
    )

    # No bus at all: muxctl starts muxd, which starts its private bus.
    pane = user.run("muxctl", "spawn", "--", "sh", "-c", "echo deb-pane-ok; exec sleep 600")
    pane_id = pane.stdout.strip()
    wait_for(lambda: "deb-pane-ok" in user.screen(pane_id), what="the pane's output")
    assert "running" in user.run("muxctl", "status").stdout
    (muxd,) = _package_muxds()
    sleeper = int(
        next(
            line.split()[2]
            for line in user.run("muxctl", "ls").stdout.splitlines()[1:]
            if line.split()[0] == pane_id
        )
    )

    # The upgrade replaces every file under the running muxd; postinst has it
    # re-execute itself in place (same pid), keeping the pane.
    upgrade = _apt("install", str(rebuilt))
    assert f"upgraded the muxd of uid {USER} (pid {muxd})" in upgrade.stdout
    assert _package_muxds() == [muxd] and pid_alive(sleeper)
    maps = Path(f"/proc/{muxd}/maps").read_text()
    assert "(deleted)" not in maps, "muxd still maps files of the version replaced"
    assert "deb-pane-ok" in user.screen(pane_id)
    assert user.run("muxctl", "send", pane_id, "x").returncode == 0
    assert pane_id in user.run("muxctl", "ls").stdout

    user.run("muxctl", "stop")
    wait_for(lambda: not pid_alive(muxd), what="muxd to stop")

    _apt("purge", "mux")
    assert not _installed()
    for path in (*INSTALLED, "/usr/lib/mux", str(SOCKET_LINK)):
        assert not os.path.lexists(path), f"{path} is left after purge"
