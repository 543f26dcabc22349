"""packaging/homebrew/mux.rb, checked without Homebrew, macOS or the network.

`ruby -c` parses it; packaging/homebrew/formula_facts.rb evaluates it against a
stand-in for Homebrew's formula DSL (as on Linux and as on macOS) and reports what it
declares, which is compared here with the pinned dependency set,
packaging/requirements.txt: one resource per pin, that exact version's sdist, with one
of the sha256s the lock lists for it; Linux-only pins on Linux only; none for a pin
another formula provides (`pypi_packages exclude_packages:` and what those need).
"""

from __future__ import annotations

import json
import plistlib
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
FORMULA = ROOT / "packaging" / "homebrew" / "mux.rb"
FACTS_SCRIPT = ROOT / "packaging" / "homebrew" / "formula_facts.rb"
REQUIREMENTS = ROOT / "packaging" / "requirements.txt"
LINUX_ONLY = 'sys_platform == "linux"'
# No release of mux exists yet: the formula's own sha256 is this until one does
# (the formula says so in a comment); a real sdist's sha256 replaces it then.
PLACEHOLDER_SHA256 = "0" * 64
PYPI_FILES = "https://files.pythonhosted.org/packages/"


@dataclass(frozen=True)
class Pin:
    name: str
    version: str
    marker: str | None
    hashes: frozenset[str]
    via: frozenset[str]  # what requires it (pip-compile's `# via`), normalized


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pins() -> dict[str, Pin]:
    """packaging/requirements.txt (pip-compile --generate-hashes) by normalized name."""
    requirement = re.compile(
        r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;\\]+)"
        r"\s*(?:;\s*(?P<marker>[^\\]+?))?\s*\\?$"
    )
    hash_line = re.compile(r"^\s+--hash=sha256:(?P<hash>[0-9a-f]{64})\s*\\?$")
    via_line = re.compile(r"^\s+#\s+via(?:\s+(?P<name>\S.*?))?\s*$|^\s+#\s{3,}(?P<more>\S.*?)\s*$")
    found: list[tuple[str, str, str | None, set[str], set[str]]] = []
    for line in REQUIREMENTS.read_text().splitlines():
        if found and (match := via_line.match(line)):
            if name := match["name"] or match["more"]:
                found[-1][4].add(normalize(name))
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if match := hash_line.match(line):
            found[-1][3].add(match["hash"])
        else:
            match = requirement.match(line)
            assert match, f"requirements.txt: cannot read {line!r}"
            marker = match["marker"].replace("'", '"') if match["marker"] else None
            found.append((normalize(match["name"]), match["version"], marker, set(), set()))
    pins = {
        name: Pin(name, version, marker, frozenset(h), frozenset(via))
        for name, version, marker, h, via in found
    }
    assert len(pins) == len(found), "a requirement pinned twice"
    assert all(pin.hashes for pin in pins.values()), "a requirement without hashes"
    return pins


def ruby() -> str:
    path = shutil.which("ruby")
    if path is None:
        pytest.fail("ruby is not installed; the test command installs it (apt-get install ruby)")
    return path


@cache
def facts(system: str) -> dict[str, Any]:
    """What the formula declares when evaluated as on `system` (linux or macos)."""
    result = subprocess.run(
        [ruby(), str(FACTS_SCRIPT), str(FORMULA), system],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    loaded: dict[str, Any] = json.loads(result.stdout)
    return loaded


def project() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        loaded: dict[str, Any] = tomllib.load(f)["project"]
    return loaded


def formula_provided(system: str, pins: dict[str, Pin]) -> set[str]:
    """The pins that other formulae, which mux's depends on, provide: those `pypi_packages
    exclude_packages:` names and their dependency trees (as brew update-python-resources)."""
    excluded = {
        normalize(name) for name in facts(system)["pypi_packages"].get("exclude_packages", [])
    }
    assert excluded <= set(pins), f"exclude_packages names what the lock lacks: {excluded}"
    while more := {name for name, pin in pins.items() if pin.via & excluded} - excluded:
        excluded |= more
    return excluded


def test_ruby_parses_the_formula() -> None:
    result = subprocess.run(
        [ruby(), "-c", str(FORMULA)], capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 0 and "Syntax OK" in result.stdout, result.stderr


@pytest.mark.parametrize("system", ["linux", "macos"])
def test_one_resource_per_pinned_dependency_its_sdist(system: str) -> None:
    pins = read_pins()
    wanted = {
        name for name, pin in pins.items() if pin.marker is None or system == "linux"
    } - formula_provided(system, pins)  # pyroute2 (netlink) is Linux's
    for name, pin in pins.items():
        assert pin.marker in (None, LINUX_ONLY), f"{name}: the formula cannot say {pin.marker}"
    resources = facts(system)["resources"]
    names = [resource["name"] for resource in resources]
    assert len(names) == len(set(names)), f"a resource declared twice: {sorted(names)}"
    assert {normalize(name) for name in names} == wanted
    for resource in resources:
        pin = pins[normalize(resource["name"])]
        url: str = resource["url"]
        filename = url.rsplit("/", 1)[1]
        # An sdist (Homebrew builds resources from source), of exactly the pinned version.
        assert url.startswith(PYPI_FILES), url
        assert filename.endswith(".tar.gz"), f"{pin.name}: not an sdist: {filename}"
        project_name, _, version = filename.removesuffix(".tar.gz").rpartition("-")
        assert (normalize(project_name), version) == (pin.name, pin.version), filename
        assert resource["sha256"] in pin.hashes, (
            f"{pin.name}: sha256 {resource['sha256']} is not one requirements.txt lists for "
            f"{pin.name}=={pin.version}: run scripts/homebrew-resources"
        )


def test_cryptography_comes_from_homebrews_formula_as_in_homebrew_core() -> None:
    pins = read_pins()
    for system in ("linux", "macos"):
        depends = {d["name"]: d["kind"] for d in facts(system)["depends_on"]}
        # Its Rust extension built against Homebrew's openssl@3, bottled; seen by the
        # virtualenv through the system site-packages, linked by nothing of mux.
        assert depends.get("cryptography") == "no_linkage"
        assert formula_provided(system, pins) == {"cryptography", "cffi", "pycparser"}
        for name in facts(system)["pypi_packages"]["exclude_packages"]:
            assert name in depends, f"{name} excluded from the resources but no dependency"


def test_linux_only_resources_are_in_an_on_linux_block() -> None:
    linux_only = {name for name, pin in read_pins().items() if pin.marker == LINUX_ONLY}
    assert "pyroute2" in linux_only
    on_linux = {r["name"] for r in facts("linux")["resources"]}
    on_macos = {r["name"] for r in facts("macos")["resources"]}
    assert on_linux - on_macos == linux_only
    assert on_macos < on_linux


def test_a_python_virtualenv_with_homebrews_python_and_rust_to_build_with() -> None:
    for system in ("linux", "macos"):
        declared = facts(system)
        depends = {d["name"]: d["kind"] for d in declared["depends_on"]}
        # pyavt and pydantic-core are Rust (PyO3) extensions built from their sdists.
        assert depends.get("rust") == "build"
        pythons = [name for name in depends if re.fullmatch(r"python@3\.\d+", name)]
        assert len(pythons) == 1 and depends[pythons[0]] is None, depends
        minimum = re.fullmatch(r">=3\.(\d+)", project()["requires-python"])
        assert minimum and int(pythons[0].split(".")[1]) >= int(minimum[1])
        assert "dbus" in depends  # dbus-daemon for muxd's private bus (no session bus on macOS)
        calls = [call["call"] for call in declared["install"]]
        assert calls[0] == "virtualenv_install_with_resources", calls
    assert re.search(r"^\s+include Language::Python::Virtualenv$", FORMULA.read_text(), re.M)


def test_man_pages_and_completions() -> None:
    install = facts("macos")["install"]
    man = [call for call in install if call["call"] == "install"]
    assert man == [{"call": "install", "into": "man1", "files": ["man/muxctl.1", "man/muxd.1"]}]
    (completions,) = [c for c in install if c["call"] == "generate_completions_from_executable"]
    assert completions["command"] == ["bin/muxctl", "completion"]
    assert completions["options"].get("shell_parameter_format") is None  # the shell: a word
    # Homebrew runs `muxctl completion SHELL` for bash, zsh and fish: each prints a script.
    for shell in ("bash", "zsh", "fish"):
        result = subprocess.run(
            [sys.executable, "-m", "muxctl", "completion", shell],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert result.returncode == 0 and "muxctl" in result.stdout, (shell, result.stderr)


def test_the_sdist_has_what_the_formula_installs_from_it(tmp_path: Path) -> None:
    url = facts("macos")["stanzas"]["url"]
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    (sdist,) = tmp_path.glob("mux-*.tar.gz")
    assert url.rsplit("/", 1)[1] == sdist.name  # the release the url stands for
    with tarfile.open(sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    for call in facts("macos")["install"]:
        for file in call.get("files", []):
            assert file in names, f"the formula installs {file}, which the sdist lacks"


def test_the_service_runs_muxd_kept_alive_as_an_interactive_process() -> None:
    for system in ("linux", "macos"):
        service = facts(system)["service"]
        assert service["run"] == ["opt_bin/muxd"]
        assert service["process_type"] == "interactive"
        assert service["keep_alive"], system
        assert "HOMEBREW_PREFIX/bin" in service["environment_variables"]["PATH"]
    # As mux's own launch agent on macOS: restarted after a failure, not a clean stop.
    agent = plistlib.loads((ROOT / "launchd" / "org.mux.muxd.plist").read_bytes())
    assert facts("macos")["service"]["keep_alive"] == {
        "successful_exit": agent["KeepAlive"]["SuccessfulExit"]
    }
    assert facts("macos")["service"]["process_type"] == agent["ProcessType"].lower()
    # The agent's Unix socket cannot be said in a service block (tcp/udp host:port only):
    # the formula has none, and says why.
    assert "SockPathName" in agent["Sockets"]["attach"]
    assert "sockets" not in facts("macos")["service"]
    text = FORMULA.read_text()
    assert "Known limitation" in text and "Sockets" in text


def test_the_formulas_own_source_is_the_release_placeholder() -> None:
    stanzas = facts("macos")["stanzas"]
    version = project()["version"]
    assert stanzas["url"] == f"{PYPI_FILES}source/m/mux/mux-{version}.tar.gz"
    assert stanzas["license"] == project()["license"]
    assert re.fullmatch(r"[0-9a-f]{64}", stanzas["sha256"])
    if stanzas["sha256"] == PLACEHOLDER_SHA256:
        # No release yet: nothing can be installed unverified, and the formula says so.
        assert "PLACEHOLDER: no release of mux exists yet" in FORMULA.read_text()


def test_the_formulas_test_block_asks_what_the_programs_answer(tmp_path: Path) -> None:
    assert facts("macos")["has_test"]
    text = FORMULA.read_text()
    assert 'assert_match "muxd #{version}", shell_output("#{bin}/muxd --version")' in text
    assert 'system bin/"muxd", "--check"' in text
    version = subprocess.run(
        [sys.executable, "-m", "mux", "--version"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert version.stdout.strip() == f"muxd {project()['version']}"
    # `muxd --check` in a bare environment, as `brew test` runs it.
    check = subprocess.run(
        [sys.executable, "-m", "mux", "--check"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        cwd=tmp_path,
    )
    assert check.returncode == 0, check.stderr
