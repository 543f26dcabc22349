"""The Arch package (packaging/arch/): makepkg builds it from the sdist as an unprivileged
user, pacman installs it into a scratch root, and the file lists are checked.

Debian offers Arch's tools (makepkg, pacman-package-manager) but neither Arch's Python nor
the runtime dependencies: the build tools (build, installer, setuptools, shtab) come from a
virtual environment of the system's Python put first on PATH, the dependency checks are
off (makepkg --nodeps, pacman -dd), and the PKGBUILD computes where modules go from the
python it runs (here usr/lib/python3.11/site-packages). Everything but the sdist is done
as an unprivileged user (nobody when the suite runs as root), pacman under fakeroot; the
real system's pacman database is never used. Needs the network (pip) like the sdist test.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import tomllib
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.packaging.installed_files import on_linux

ROOT = Path(__file__).resolve().parents[2]
ARCH = ROOT / "packaging" / "arch"
SYSTEM_PYTHON = "/usr/bin/python3"  # any user can run it (a pyenv's may sit below /root)
NOBODY = 65534
TOOLS = {
    "makepkg": "makepkg",
    "pacman": "pacman-package-manager",
    "bsdtar": "libarchive-tools",
    "fakeroot": "fakeroot",
    "setpriv": "util-linux",
}
BUILD_TOOLS = ("build>=1.0", "installer>=0.7", "setuptools>=77", "shtab>=1.9")

# A file of the sdist (the same path in the repository) -> where the package installs it.
DATA = {
    "units/mux.service": "usr/lib/systemd/user/mux.service",
    "units/mux.socket": "usr/lib/systemd/user/mux.socket",
    "units/mux-web.service": "usr/lib/systemd/user/mux-web.service",
    "units/mux-web.socket": "usr/lib/systemd/user/mux-web.socket",
    "units/org.mux.Mux1.service": "usr/share/dbus-1/services/org.mux.Mux1.service",
    "desktop/org.mux.Mux.desktop": "usr/share/applications/org.mux.Mux.desktop",
    "desktop/org.mux.Mux.search-provider.ini": (
        "usr/share/gnome-shell/search-providers/org.mux.Mux.search-provider.ini"
    ),
    "desktop/krunner/org.mux.Mux.desktop": "usr/share/krunner/dbusplugins/org.mux.Mux.desktop",
    "LICENSE": "usr/share/licenses/mux/LICENSE",
    "packaging/upgrade-running-muxds": "usr/libexec/mux/upgrade-running-muxds",
    **{
        f"desktop/interfaces/{xml.name}": f"usr/share/dbus-1/interfaces/{xml.name}"
        for xml in (ROOT / "desktop" / "interfaces").glob("*.xml")
    },
}
MAN_PAGES = {  # makepkg compresses them (OPTIONS=(zipman))
    "man/muxctl.1": "usr/share/man/man1/muxctl.1.gz",
    "man/muxd.1": "usr/share/man/man1/muxd.1.gz",
}
COMPLETIONS = {
    "bash": "usr/share/bash-completion/completions/muxctl",
    "zsh": "usr/share/zsh/site-functions/_muxctl",
    "fish": "usr/share/fish/vendor_completions.d/muxctl.fish",
}
PROGRAMS = ("usr/bin/muxd", "usr/bin/muxctl")


def project() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        table: dict[str, object] = tomllib.load(f)["project"]
    return table


def srcinfo(text: str) -> dict[str, list[str]]:
    """`key = value` lines of a .SRCINFO or .PKGINFO, every value of each key."""
    fields: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition(" = ")
        if sep and not key.startswith("#"):
            fields.setdefault(key, []).append(value)
    return fields


def names(relations: Sequence[str]) -> set[str]:
    """Package names of depends-like entries, without version constraints."""
    return {re.split(r"[<>=]", relation, maxsplit=1)[0] for relation in relations}


@dataclass
class Builder:
    """Runs commands as an unprivileged user, in a scratch directory it owns."""

    work: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            # Not the test's Python, make or per-user directories (the builder's are below).
            if key not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "MAKEFLAGS", "PIP_CACHE_DIR"}
            and not key.startswith("XDG_")
        }
        env.update(
            HOME=str(self.work / "home"),
            TMPDIR=str(self.work / "tmp"),
            LC_ALL="C.UTF-8",
            PATH=f"{self.work / 'venv' / 'bin'}:/usr/bin:/bin",
        )
        env.update(extra)
        return env

    def run(
        self, argv: Sequence[str | Path], cwd: Path, timeout: float = 120, **env: str
    ) -> subprocess.CompletedProcess[str]:
        as_user = (
            ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
            if os.geteuid() == 0
            else []
        )
        result = subprocess.run(
            [*as_user, *map(str, argv)],
            cwd=cwd,
            env=self.env(**env),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert result.returncode == 0, f"{argv}:\n{result.stdout}\n{result.stderr}"
        return result

    def give(self, path: Path) -> None:
        """Hand a file or tree the test made to the builder."""
        if os.geteuid() == 0:
            for each in [path, *(path.rglob("*") if path.is_dir() else [])]:
                os.chown(each, NOBODY, NOBODY, follow_symlinks=False)


@pytest.fixture(scope="module")
def builder() -> Iterator[Builder]:
    missing = [f"{tool} ({pkg})" for tool, pkg in TOOLS.items() if shutil.which(tool) is None]
    if not Path(SYSTEM_PYTHON).exists():
        missing.append(f"{SYSTEM_PYTHON} (python3, python3-venv)")
    if missing:
        pytest.fail(f"missing {', '.join(missing)}; scripts/test installs them (apt-get)")
    work = Path(tempfile.mkdtemp(prefix="mux-arch-"))
    try:
        work.chmod(0o755)
        for sub in ("home", "tmp", "sources", "out", "build", "pkgbuild", "root", "srcinfo"):
            (work / sub).mkdir()
        builder = Builder(work)
        builder.give(work)
        yield builder
    finally:
        shutil.rmtree(work)  # as root, or as the user who is the builder


@dataclass
class Built:
    builder: Builder
    package: Path
    wheel: Path
    root: Path
    site: str  # where the modules went, absolute (/usr/lib/python3.X/site-packages)

    def pacman(self, *args: str) -> str:
        work = self.builder.work
        options = [
            *("--config", work / "pacman.conf", "--root", self.root),
            *("--dbpath", self.root / "var/lib/pacman", "--cachedir", work / "cache"),
            *("--logfile", work / "pacman.log", "--hookdir", work / "hooks"),
            *("--gpgdir", work / "gnupg"),
        ]
        # One fakeroot state for every call: ownership reads back as the package says.
        state = ["-i", work / "fakeroot.state"] if (work / "fakeroot.state").exists() else []
        argv = ["fakeroot", *state, "-s", work / "fakeroot.state", "--", "pacman", *options]
        return self.builder.run([*argv, *args], cwd=work).stdout


@pytest.fixture(scope="module")
def built(builder: Builder) -> Built:
    work = builder.work
    venv = work / "venv"
    builder.run([SYSTEM_PYTHON, "-m", "venv", venv], cwd=work)
    builder.run([venv / "bin/python", "-m", "pip", "install", "-q", *BUILD_TOOLS], cwd=work)
    # The sdist a packager starts from (the test's own user writes the egg-info in ROOT).
    sdist_build = subprocess.run(
        [venv / "bin/python", "-m", "build", "--sdist", "--no-isolation", "--outdir", work, ROOT],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert sdist_build.returncode == 0, sdist_build.stdout + sdist_build.stderr
    version = project()["version"]
    sdist = work / f"mux-{version}.tar.gz"
    # makepkg looks for the source in SRCDEST before downloading it (there is no release
    # to download); the committed sha256sums is a placeholder for the release's, so this
    # copy of the PKGBUILD gets this sdist's (as `updpkgsums` would write it).
    shutil.move(sdist, work / "sources" / sdist.name)
    digest = hashlib.sha256((work / "sources" / sdist.name).read_bytes()).hexdigest()
    pkgbuild, count = re.subn(
        r"^sha256sums=\([^)]*\)",
        f"sha256sums=('{digest}')",
        (ARCH / "PKGBUILD").read_text(),
        flags=re.MULTILINE,
    )
    assert count == 1, "PKGBUILD: one sha256sums=(...) line"
    (work / "pkgbuild" / "PKGBUILD").write_text(pkgbuild)
    shutil.copy(ARCH / "mux.install", work / "pkgbuild")
    (work / "pacman.conf").write_text("[options]\nArchitecture = auto\n")
    builder.give(work)
    builder.run(
        ["makepkg", "--nodeps", "--noconfirm", "--nocolor"],
        cwd=work / "pkgbuild",
        timeout=300,
        SRCDEST=str(work / "sources"),
        BUILDDIR=str(work / "build"),
        PKGDEST=str(work / "out"),
        # makepkg asks pacman only for the installed packages it lists in .BUILDINFO:
        # none here, and the system's pacman database stays out of it.
        PACMAN="true",
    )
    (package,) = (work / "out").glob(f"mux-{version}-*-any.pkg.tar.*")
    (wheel,) = (work / "build").glob(f"mux/src/mux-{version}/dist/mux-{version}-*.whl")
    site = builder.run(
        [
            venv / "bin/python",
            "-c",
            'import sysconfig; print(sysconfig.get_path("purelib", vars={"base": "/usr"}))',
        ],
        cwd=work,
    ).stdout.strip()
    result = Built(builder, package, wheel, work / "root", site)
    (result.root / "var/lib/pacman").mkdir(parents=True)
    builder.give(result.root)
    result.pacman("-U", "--noconfirm", "--noprogressbar", "--noscriptlet", "-dd", str(package))
    return result


def package_files(built: Built) -> set[str]:
    """The files of the package, as pacman lists them (below the root it is told)."""
    listing = built.pacman("-Qlpq", str(built.package)).splitlines()
    return {line.removeprefix(f"{built.root}/") for line in listing if not line.endswith("/")}


def test_srcinfo_is_what_makepkg_prints(builder: Builder) -> None:
    for name in ("PKGBUILD", "mux.install"):
        shutil.copy(ARCH / name, builder.work / "srcinfo")
    builder.give(builder.work / "srcinfo")
    printed = builder.run(["makepkg", "--printsrcinfo"], cwd=builder.work / "srcinfo").stdout
    committed = (ARCH / ".SRCINFO").read_text()
    assert committed == printed, "cd packaging/arch && makepkg --printsrcinfo > .SRCINFO"


def test_the_pkgbuild_follows_pyproject() -> None:
    info = srcinfo((ARCH / ".SRCINFO").read_text())
    meta = project()
    assert info["pkgname"] == ["mux"] and info["arch"] == ["any"]
    assert info["pkgver"] == [meta["version"]], "bump pkgver (and reset pkgrel) with the version"
    assert info["license"] == [meta["license"]]
    assert info["source"] == [
        f"mux-{meta['version']}.tar.gz::{info['url'][0]}/releases/mux-{meta['version']}.tar.gz"
    ]
    assert len(info["sha256sums"]) == 1
    assert isinstance(meta["dependencies"], list)
    dependencies = [dep for dep in meta["dependencies"] if on_linux(dep)]
    wanted = {"python"} | {
        "python-" + re.split(r"[ ;<>=!~\[]", dep, maxsplit=1)[0].lower() for dep in dependencies
    }
    assert names(info["depends"]) == wanted
    assert names(info["makedepends"]) == {
        "python-build",
        "python-installer",
        "python-setuptools",
        "python-shtab",
    }
    assert info["install"] == ["mux.install"]


def test_the_package_carries_the_wheel_and_the_files_of_the_sdist(built: Built) -> None:
    files = package_files(built)
    site = built.site.removeprefix("/")
    assert site.startswith("usr/lib/python3.")
    outside = {name for name in files if not name.startswith(site + "/")}
    expected = {*DATA.values(), *MAN_PAGES.values(), *COMPLETIONS.values(), *PROGRAMS}
    assert outside == expected  # nothing in etc/: no unit is enabled for every user
    # The modules: exactly the wheel's files, and each module byte-compiled.
    inside = {name.removeprefix(site + "/") for name in files} - outside
    pyc = {name for name in inside if name.endswith(".pyc")}
    wheel = {name for name in zipfile.ZipFile(built.wheel).namelist() if not name.endswith("/")}
    assert inside - pyc == wheel
    assert {"mux/daemon.py", "muxctl/main.py"} <= wheel
    compiled = {re.sub(r"__pycache__/([^/.]+)\..*\.pyc$", r"\1.py", name) for name in pyc}
    assert compiled == {name for name in wheel if name.endswith(".py")}
    pkginfo = srcinfo(
        subprocess.run(
            ["bsdtar", "-xOf", built.package, ".PKGINFO"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert pkginfo["pkgver"] == [f"{project()['version']}-1"]
    assert pkginfo["depend"] == srcinfo((ARCH / ".SRCINFO").read_text())["depends"]


def test_pacman_installs_it_into_a_scratch_root(built: Built) -> None:
    root = built.root
    listed = {
        line.split(" ", 1)[1].removeprefix(f"{root}/")
        for line in built.pacman("-Ql", "mux").splitlines()
    }
    usr = root / "usr"
    on_disk = {str(path.relative_to(root)) for path in [usr, *usr.rglob("*")]}
    assert {name for name in listed if not name.endswith("/")} == package_files(built)
    assert {name.rstrip("/") for name in listed} == on_disk
    assert sorted(os.listdir(root)) == ["usr", "var"]  # var: pacman's database and cache
    assert "0 altered files" in built.pacman("-Qkk", "mux")  # owners, modes, sizes, mtimes
    for program in PROGRAMS:
        assert (root / program).read_text().startswith("#!/usr/bin/python\n"), program
        assert os.access(root / program, os.X_OK), program
    for source, installed in DATA.items():
        assert (root / installed).read_bytes() == (ROOT / source).read_bytes(), installed
    for source, installed in MAN_PAGES.items():
        text = gzip.decompress((root / installed).read_bytes())
        assert text == (ROOT / source).read_bytes(), installed
    # The completions are what the installed muxctl prints (its own modules, its entry
    # point; the venv has shtab, the one dependency `muxctl completion` imports).
    python = built.builder.work / "venv" / "bin" / "python"
    for shell, installed in COMPLETIONS.items():
        printed = built.builder.run(
            [python, root / "usr/bin/muxctl", "completion", shell],
            cwd=built.builder.work,
            PYTHONPATH=f"{root}{built.site}",
        ).stdout
        assert printed and (root / installed).read_text() == printed, installed
    assert (root / COMPLETIONS["zsh"]).read_text().startswith("#compdef muxctl")


def test_the_scriptlet_explains_and_upgrades_running_muxds(built: Built) -> None:
    scriptlet = subprocess.run(
        ["bsdtar", "-xOf", built.package, ".INSTALL"], capture_output=True, text=True, check=True
    ).stdout
    assert scriptlet == (ARCH / "mux.install").read_text()
    said = subprocess.run(
        ["bash", "-c", 'source "$1"; post_install', "-", ARCH / "mux.install"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "systemctl --user enable --now mux.socket" in said
    # It runs nothing but upgrade-running-muxds after an upgrade (no systemctl, no
    # restart: that would hang up every user's panes).
    for line in scriptlet.splitlines():
        assert re.fullmatch(
            r"\s*(#.*|echo .*|post_\w+\(\) \{|\}||"
            r"/usr/libexec/mux/upgrade-running-muxds /usr/bin/python)",
            line,
        ), line
