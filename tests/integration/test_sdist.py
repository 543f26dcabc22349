"""The sdist a packager starts from (packaging/README.md): the license, the units, the
launchd agent, the desktop files and the docs at their own places, and a wheel built
from it that still carries them as package data."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_sdist_and_its_wheel_carry_everything(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (sdist,) = tmp_path.glob("mux-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
        info = tar.extractfile(f"{sdist.name.removesuffix('.tar.gz')}/PKG-INFO")
        assert info is not None
        metadata = info.read().decode()
    for shipped in (
        "LICENSE",
        "units/mux.service",
        "units/mux.socket",
        "units/mux-web.service",
        "units/mux-web.socket",
        "units/org.mux.Mux1.service",
        "launchd/org.mux.muxd.plist",
        "desktop/org.mux.Mux.desktop",
        "desktop/krunner/org.mux.Mux.desktop",
        "desktop/interfaces/org.mux.Mux1.Manager.xml",
        "docs/muxctl.md",
        "man/muxctl.1",
        "man/muxd.1",
        "packaging/requirements.txt",
        "package-lock.json",  # muxctl web's browser files: the lock they came from,
        "ctl/muxctl/web/static/vendor/xterm.mjs",  # and the files (setup.py)
        "ctl/muxctl/web/static/vendor/addon-fit.mjs",
        "ctl/muxctl/web/static/vendor/xterm.LICENSE",
    ):
        assert shipped in names, shipped
    assert not any(name.startswith("node_modules") for name in names)
    assert "License-Expression: MIT" in metadata and "License-File: LICENSE" in metadata
    # From the sdist, a wheel needs no npm: the browser files are in it.
    without_npm = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    assert shutil.which("npm", path=without_npm["PATH"]) is None
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path), str(sdist)],
        check=True,
        capture_output=True,
        env=without_npm,
    )
    (wheel,) = tmp_path.glob("mux-*.whl")
    carried = set(zipfile.ZipFile(wheel).namelist())
    for data in (
        "mux/unitfiles/mux.service",
        "mux/desktopfiles/org.mux.Mux.desktop",
        "muxctl/web/static/pane.js",
        "muxctl/web/static/vendor/xterm.mjs",
        "muxctl/web/static/vendor/xterm.css",
    ):
        assert data in carried, data
    assert any(name.endswith("licenses/LICENSE") for name in carried)
