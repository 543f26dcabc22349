"""The build step pyproject.toml cannot say: the browser side of `muxctl web` (xterm.js
and its fit addon) comes from npm when the package is built, at the versions
package-lock.json pins, and is copied into the package; it is never committed. An
sdist carries the copied files, so a wheel, or a distribution package, built from it
needs no npm (docs/web.md#where-xtermjs-comes-from)."""

import hashlib
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

ROOT = Path(__file__).resolve().parent
LOCK = ROOT / "package-lock.json"
VENDOR = ROOT / "ctl" / "muxctl" / "web" / "static" / "vendor"
STAMP = VENDOR / "package-lock.sha256"  # which lock the files were copied from
FILES = {  # in node_modules -> in the package
    "@xterm/xterm/lib/xterm.mjs": "xterm.mjs",
    "@xterm/xterm/css/xterm.css": "xterm.css",
    "@xterm/xterm/LICENSE": "xterm.LICENSE",
    "@xterm/addon-fit/lib/addon-fit.mjs": "addon-fit.mjs",
    "@xterm/addon-fit/LICENSE": "addon-fit.LICENSE",
}


def vendor_web_assets() -> None:
    """Copy the npm packages' files into the package, unless those of this lock are
    there already (an unpacked sdist has them, and may have no npm)."""
    lock_hash = hashlib.sha256(LOCK.read_bytes()).hexdigest() if LOCK.exists() else None
    present = all((VENDOR / name).is_file() for name in FILES.values())
    if present and (lock_hash is None or _stamped() == lock_hash):
        return
    if lock_hash is None:
        raise SystemExit("muxctl web's browser files are missing and no package-lock.json is here")
    if shutil.which("npm") is None:
        raise SystemExit(
            "building mux from its repository needs npm, for muxctl web's browser files "
            "(xterm.js): install npm (Debian: apt install npm), or build from an sdist"
        )
    subprocess.run(
        ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=ROOT, check=True
    )
    VENDOR.mkdir(parents=True, exist_ok=True)
    for source, name in FILES.items():
        shutil.copyfile(ROOT / "node_modules" / source, VENDOR / name)
    STAMP.write_text(lock_hash + "\n")


def _stamped() -> str | None:
    try:
        return STAMP.read_text().strip()
    except FileNotFoundError:
        return None


class BuildPy(build_py):
    def run(self) -> None:
        vendor_web_assets()
        super().run()


class Sdist(sdist):
    def run(self) -> None:
        vendor_web_assets()
        super().run()


if __name__ == "__main__":  # (setuptools runs it so; packaging/build-deb imports it)
    setup(cmdclass={"build_py": BuildPy, "sdist": Sdist})
