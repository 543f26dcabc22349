"""The RPM packaging (packaging/rpm/): the bundled-venv variant of mux.spec really built
with rpmbuild (packaging/rpm/build-bundled) -- its file list, its payload free of build
paths and working where it was moved to, its scriptlets and dependencies; the Fedora
variant and python-pyavt.spec parsed with stand-ins for Fedora's macros; rpmlint clean
with the project's rpmlintrc."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.packaging.installed_files import FEDORA_ZSH_COMPLETION, SYSTEM_FILES

ROOT = Path(__file__).resolve().parents[2]
RPM = ROOT / "packaging" / "rpm"
SPECS = [RPM / "mux.spec", RPM / "python-pyavt.spec"]
RPMLINTRC = RPM / "mux.rpmlintrc"
STUBS = RPM / "macros.fedora-stubs"
VENV = "/usr/lib64/mux"

# packaging/README.md's table, the man pages and the completions.
INSTALLED = [*SYSTEM_FILES, FEDORA_ZSH_COMPLETION, "/usr/share/licenses/mux-0.1.0/LICENSE"]


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed; scripts/test installs it (apt-get)")
    return path


def _run(
    argv: list[str], env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, capture_output=True, text=True, check=False, env=env, timeout=timeout
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(topdir, the binary package) of packaging/rpm/build-bundled in a temporary topdir."""
    _tool("rpmbuild")
    topdir = tmp_path_factory.mktemp("rpm")
    result = _run(
        [str(RPM / "build-bundled"), str(topdir)],
        env={**os.environ, "PYTHON": sys.executable},
        timeout=600,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    (package,) = (topdir / "RPMS").glob("*/mux-0.1.0-*.rpm")
    return topdir, package


def _query(package: Path, *args: str) -> str:
    result = _run(["rpm", "-qp", *args, str(package)])
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_bundled_package_installs_every_file_and_nothing_else(built: tuple[Path, Path]) -> None:
    _, package = built
    listing = _query(package, "--qf", "[%{FILENAMES} %{FILELINKTOS}\n]").splitlines()
    links = dict(line.split(" ", 1) for line in listing)
    missing = [path for path in INSTALLED if path not in links]
    assert not missing, missing
    # /usr/bin has the venv's programs, whose units, D-Bus service and desktop files name them.
    assert links["/usr/bin/muxd"] == "../lib64/mux/bin/muxd"
    assert links["/usr/bin/muxctl"] == "../lib64/mux/bin/muxctl"
    assert links[f"{VENV}/bin/python3"] == "/usr/bin/python3"
    for path in links:
        if path in INSTALLED or path.startswith((VENV, "/usr/share/doc/mux-0.1.0")):
            continue
        # Only the directories the package shares with the desktops it integrates with.
        assert path in {
            "/usr/share/gnome-shell",
            "/usr/share/gnome-shell/search-providers",
            "/usr/share/krunner",
            "/usr/share/krunner/dbusplugins",
            "/usr/share/licenses/mux-0.1.0",
            "/usr/libexec/mux",
        }, path
    assert f"{VENV}/pyvenv.cfg" in links
    assert not [path for path in links if path.startswith(f"{VENV}/bin/pip")]


def test_the_payload_names_no_build_path_and_runs_where_it_was_moved(
    built: tuple[Path, Path], tmp_path: Path
) -> None:
    topdir, package = built
    _tool("cpio")
    payload = subprocess.run(["rpm2cpio", str(package)], capture_output=True, check=True).stdout
    subprocess.run(["cpio", "-idm", "--quiet"], input=payload, cwd=tmp_path, check=True)
    files = [p for p in tmp_path.rglob("*") if p.is_file() and not p.is_symlink()]
    assert len(files) > 500
    # topdir holds the build root and the build directory; no file, .pyc included, names it.
    leaks = [str(p.relative_to(tmp_path)) for p in files if str(topdir).encode() in p.read_bytes()]
    assert not leaks, leaks
    for link in (p for p in tmp_path.rglob("*") if p.is_symlink()):
        assert str(topdir) not in os.readlink(link), link
    venv = tmp_path / VENV.lstrip("/")
    assert (venv / "bin/muxd").read_text().startswith(f"#!{VENV}/bin/python3\n")
    assert "home = /usr/bin\n" in (venv / "pyvenv.cfg").read_text()
    assert len(list(venv.rglob("*.pyc"))) >= len(list(venv.rglob("*.py")))
    # The venv works moved under tmp_path (its interpreter is the system's /usr/bin/python3):
    # muxd loads every module, and muxctl prints the completion the package carries.
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}
    check = _run([str(venv / "bin/python3"), str(venv / "bin/muxd"), "--check"], env=env)
    assert check.returncode == 0 and "ok" in check.stdout, check.stdout + check.stderr
    fish = _run(
        [str(venv / "bin/python3"), str(venv / "bin/muxctl"), "completion", "fish"], env=env
    )
    shipped = tmp_path / "usr/share/fish/vendor_completions.d/muxctl.fish"
    assert fish.returncode == 0 and fish.stdout == shipped.read_text(), fish.stderr


def test_user_units_are_preset_on_install_and_never_restarted(built: tuple[Path, Path]) -> None:
    _, package = built
    scripts = _query(package, "--scripts")
    post = scripts.split("postinstall scriptlet", 1)[1].split("scriptlet", 1)[0]
    assert "--global preset mux.socket" in post and "$1 -eq 1" in post
    assert "--global disable mux.socket mux.service" in scripts
    code = [line for line in scripts.splitlines() if not line.lstrip().startswith("#")]
    assert not [line for line in code if "restart" in line], scripts


def test_the_bundled_package_provides_the_lock_and_requires_only_the_system(
    built: tuple[Path, Path],
) -> None:
    _, package = built
    pins = re.findall(
        r"^([A-Za-z0-9._-]+)==(\S+)", (ROOT / "packaging/requirements.txt").read_text(), re.M
    )
    bundled = set(
        re.findall(
            r"^bundled\(python3dist\((\S+)\)\) = (\S+)$", _query(package, "--provides"), re.M
        )
    )
    assert bundled == {(name.lower(), version) for name, version in pins}
    requires = _query(package, "--requires").splitlines()
    assert not [r for r in requires if "dist(" in r], requires
    assert any(r.startswith("python(abi) = 3.") for r in requires)
    assert not [r for r in _query(package, "--provides").splitlines() if ".so" in r]


def test_rpmlint_passes_both_specs() -> None:
    rpmlint = _tool("rpmlint")
    # Without the built package some filters have nothing to filter; the test below
    # runs with all three and reports unused (stale) filters.
    result = _run([rpmlint, "--ignore-unused-rpmlintrc", "-r", str(RPMLINTRC), *map(str, SPECS)])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 errors, 0 warnings" in result.stdout, result.stdout


def test_rpmlint_passes_the_specs_and_the_package_with_no_stale_filter(
    built: tuple[Path, Path],
) -> None:
    rpmlint = _tool("rpmlint")
    _, package = built
    result = _run([rpmlint, "-r", str(RPMLINTRC), *map(str, SPECS), str(package)])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 errors, 0 warnings" in result.stdout, result.stdout


DIRECTIVES = {
    "description", "package", "prep", "generate_buildrequires", "build", "install", "check",
    "files", "post", "preun", "postun", "posttrans", "changelog", "license", "doc", "dir",
}  # fmt: skip


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.name)
def test_the_fedora_specs_parse_with_fedora_macros_standing_in(spec: Path) -> None:
    _tool("rpmspec")
    result = _run(["rpmspec", "-P", "--load", str(STUBS), str(spec)])
    assert result.returncode == 0, result.stderr
    code = [line for line in result.stdout.splitlines() if not line.lstrip().startswith("#")]
    left = {m for line in code for m in re.findall(r"%[{?!]*([A-Za-z_]\w*)", line)} - DIRECTIVES
    assert not left, f"macros neither rpm's nor in {STUBS.name}: {left}"
    text = "\n".join(code)
    assert "BuildArch:      noarch" in text or "python3-pyavt" in text
    assert re.search(r"^%files .*-f \S+/pyproject-files$", text, re.M), text
    assert ": pyproject_save_files -l " in text
    if spec.name == "mux.spec":
        assert "echo 'python3dist(setuptools) >= 77'" in text  # %pyproject_buildrequires
        assert "/usr/bin/muxctl completion zsh >" in text
