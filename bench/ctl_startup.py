"""CLI start-up: the whole-process time of `muxctl ls` against `python3 -c pass`.

Both run on the real interpreter (sys.executable with symlinks resolved, never
a pyenv shim), against a running muxd with a few panes, in interleaved rounds.
Besides `python -m muxctl ls`, the installed `muxctl` console script is timed
when its shebang names a real interpreter, and the `muxctl` found first on
PATH when that is something else (a pyenv shim, say): that is what a user
typing `muxctl` gets. CPU time (user + system, from the children's rusage)
is shown beside the wall-clock time.

The figure the goal is set on comes from a clean venv made for the run (`python -m
venv`, mux installed into it from this checkout, not editable: no `.pth` file runs at
start): its `python -c pass` against its `muxctl ls` and `muxctl spawn -- true`.

Run from the repository root: python3 bench/ctl_startup.py [--rounds N] [--imports]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from common import REAL_PYTHON, Muxd, connect, median, percentile, print_table, spawn

GOAL = 3.0  # muxctl ls and spawn ≤ 3x python -c pass, in a clean venv
PANES = 5
# What muxctl's verbs are built on: argparse and jeepney's blocking client (socket,
# selectors, struct, enum, typing come with them).
FLOOR_MODULES = ("argparse", "jeepney.io.blocking")


@dataclass
class Candidate:
    name: str
    argv: list[str]
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def shebang(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            first = f.readline()
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    return first[2:].decode(errors="replace").strip()


def interpreter(line: str) -> str:
    """The program a shebang line runs, following `/usr/bin/env NAME`."""
    words = line.split()
    program = words[0]
    if os.path.basename(program) == "env" and len(words) > 1:
        program = shutil.which(words[1]) or words[1]
    return os.path.realpath(program)


def is_real_python(path: str) -> bool:
    """An interpreter binary itself, not a wrapper script such as a pyenv shim."""
    try:
        with open(path, "rb") as f:
            elf = f.read(4) == b"\x7fELF"
    except OSError:
        return False
    return elf and os.path.basename(path).startswith("python")


def console_scripts() -> list[Candidate]:
    """The installed `muxctl` beside the interpreter, and every other `muxctl` on PATH."""
    found: list[Candidate] = []
    beside = str(Path(REAL_PYTHON).parent / "muxctl")
    line = shebang(beside)
    if line is not None and is_real_python(interpreter(line)):
        found.append(Candidate(f"{beside} ls", [beside, "ls"]))
    seen = {os.path.realpath(beside)}
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        path = os.path.join(directory or ".", "muxctl")
        if os.path.realpath(path) in seen or not os.access(path, os.X_OK):
            continue
        seen.add(os.path.realpath(path))
        line = shebang(path)
        runs = os.path.basename(interpreter(line)) if line else "binary"
        found.append(Candidate(f"{path} ls (#! {runs})", [path, "ls"]))
    return found


def pth_files() -> list[str]:
    import site

    return sorted(p.name for d in site.getsitepackages() for p in Path(d).glob("*.pth"))


def run_once(candidate: Candidate, env: dict[str, str]) -> None:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(
        candidate.argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, check=False
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise RuntimeError(f"{candidate.name} exited {result.returncode}: {result.stderr!r}")
    candidate.wall.append(wall)
    candidate.cpu.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))


def print_imports(env: dict[str, str]) -> None:
    """The slowest imports of `muxctl ls` (cumulative), from -X importtime."""
    result = subprocess.run(
        [REAL_PYTHON, "-X", "importtime", "-m", "muxctl", "ls"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    rows: list[tuple[int, int, str]] = []
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        own, cumulative, name = line.removeprefix("import time:").split("|")
        rows.append((int(cumulative), int(own), name.rstrip()))
    top = [r for r in rows if not r[2].startswith("   ")]  # top-level imports only
    top.sort(reverse=True)
    print("\nslowest top-level imports of `muxctl ls` (one run, -X importtime), ms")
    print_table(
        ["module", "cumulative", "own"],
        [[name.strip(), f"{c / 1000:.1f}", f"{o / 1000:.1f}"] for c, o, name in top[:12]],
    )


def clean_venv(root: Path) -> Path:
    """A venv with mux installed from this checkout (a wheel, not editable)."""
    venv = root / "venv"
    subprocess.run([REAL_PYTHON, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin/python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
         str(Path(__file__).resolve().parents[1])],
        check=True,
    )  # fmt: skip
    return venv


async def add_panes(address: str, argv: Sequence[str], count: int) -> None:
    bus = await connect(address)
    try:
        for _ in range(count):
            await spawn(bus, argv)
    finally:
        bus.disconnect()


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=30, help="runs of each command")
    parser.add_argument("--imports", action="store_true", help="also show the slowest imports")
    args = parser.parse_args()

    baseline = Candidate("python -c pass", [REAL_PYTHON, "-c", "pass"])
    bare = Candidate("python -S -c pass (no site, no .pth)", [REAL_PYTHON, "-S", "-c", "pass"])
    module = Candidate("python -m muxctl ls", [REAL_PYTHON, "-m", "muxctl", "ls"])
    with tempfile.TemporaryDirectory(prefix="mux-bench-venv-") as scratch:
        venv = clean_venv(Path(scratch))
        clean = Candidate("clean venv: python -c pass", [str(venv / "bin/python"), "-c", "pass"])
        clean_ls = Candidate("clean venv: muxctl ls", [str(venv / "bin/muxctl"), "ls"])
        clean_spawn = Candidate(
            "clean venv: muxctl spawn -- true", [str(venv / "bin/muxctl"), "spawn", "--", "true"]
        )
        # The libraries a command-line D-Bus client is built on, loaded and nothing
        # done: the floor here.
        floor = Candidate(
            "clean venv: python -c 'import " + ", ".join(FLOOR_MODULES) + "'",
            [str(venv / "bin/python"), "-c", "import " + ", ".join(FLOOR_MODULES)],
        )
        candidates = [
            baseline, bare, module, *console_scripts(), clean, floor, clean_ls, clean_spawn
        ]  # fmt: skip
        measure(candidates, args)
    report(
        candidates,
        args,
        baseline=baseline,
        bare=bare,
        module=module,
        clean=(clean, clean_ls, clean_spawn),
    )
    return 0


def measure(candidates: list[Candidate], args: argparse.Namespace) -> None:
    with Muxd() as muxd:
        sleep = shutil.which("sleep") or "/bin/sleep"
        asyncio.run(add_panes(muxd.bus_address, [sleep, "1000"], PANES))
        for candidate in candidates:  # warm-up: page cache, .pyc files
            run_once(candidate, muxd.env)
            candidate.wall.clear()
            candidate.cpu.clear()
        for _ in range(args.rounds):
            for candidate in candidates:
                run_once(candidate, muxd.env)
        if args.imports:
            print_imports(muxd.env)
            print()


def report(
    candidates: list[Candidate],
    args: argparse.Namespace,
    *,
    baseline: Candidate,
    bare: Candidate,
    module: Candidate,
    clean: tuple[Candidate, Candidate, Candidate],
) -> None:
    print(f"CLI start-up: {args.rounds} interleaved runs each, {PANES} panes listed")
    print(f"interpreter: {REAL_PYTHON}\n")
    base = median(baseline.wall)
    print_table(
        ["command", "wall median ms", "wall p90 ms", "cpu median ms", "x python -c pass"],
        [
            [
                c.name,
                ms(median(c.wall)),
                ms(percentile(c.wall, 0.9)),
                ms(median(c.cpu)),
                f"{median(c.wall) / base:.2f}",
            ]
            for c in candidates
        ],
    )
    venv_base = median(clean[0].wall)
    for candidate in clean[1:]:
        ratio = median(candidate.wall) / venv_base
        verdict = "met" if ratio <= GOAL else "missed"
        print(
            f"\ngoal: {candidate.name.removeprefix('clean venv: ')} <= {GOAL:.0f}x python -c pass "
            f"(clean venv): {ratio:.2f}x, {verdict}",
            end="",
        )
    print(f"\nthis interpreter: python -m muxctl ls is {median(module.wall) / base:.2f}x")
    site_ms = (base - median(bare.wall)) * 1000
    print(
        f"note: importing site costs {site_ms:.0f} ms of every start on this interpreter "
        f"(.pth files it runs: {', '.join(pth_files()) or 'none'})"
    )


if __name__ == "__main__":
    raise SystemExit(main())
