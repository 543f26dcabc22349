"""man/muxctl.1 and man/muxd.1 (installed by every package) are generated from the
programs' own argument parsers plus man/*.include: they must agree with the parsers
(scripts/man-pages regenerates them) and render without a groff warning."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("muxctl.1", "muxd.1")


def test_the_man_pages_agree_with_the_parsers(tmp_path: Path) -> None:
    subprocess.run(
        [str(ROOT / "scripts" / "man-pages"), "--check", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    for page in PAGES:
        assert (tmp_path / page).read_text() == (ROOT / "man" / page).read_text(), (
            f"man/{page} is stale: run scripts/man-pages"
        )


@pytest.mark.parametrize("page", PAGES)
def test_a_man_page_renders_without_warnings(page: str) -> None:
    if shutil.which("man") is None:
        pytest.fail("man is not installed; the test command installs it (man-db)")
    # As lintian reads a page: 80 columns, UTF-8, every warning on.
    result = subprocess.run(
        ["man", "--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", str(ROOT / "man" / page)],
        env={**os.environ, "MANWIDTH": "80", "LC_ALL": "C.UTF-8"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stderr == "", result.stderr
    assert (
        "EXIT STATUS"
        in subprocess.run(
            ["man", "-l", str(ROOT / "man" / page)],
            env={**os.environ, "MANWIDTH": "80"},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
