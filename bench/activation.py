"""Socket activation: from the first connection on mux.sock, with mux.service stopped,
to the first answered D-Bus call — under a real systemd --user, side by side with
`python3 -c pass` measured in the same run.

Needs root (systemd --user runs in a private mount namespace, as in the tests).
Goal (issue #3): <= 15x python3 -c pass.

Run from the repository root: python3 bench/activation.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.harness import temp_root
from tests.systemd.conftest import UserSystemd, _why_not

from common import connect, median, percentile, print_table

GOAL = 15.0


def python_pass(runs: int) -> list[float]:
    real = os.path.realpath(sys.executable)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([real, "-c", "pass"], check=True)
        times.append(time.perf_counter() - start)
    return times


async def activation_once(sd: UserSystemd) -> float:
    """Stopped service; connect to the socket; time until a D-Bus call is answered."""
    sd.systemctl("stop", "mux.service")
    sd.wait_state("mux.service", "inactive")
    # systemd allows 5 starts in 10 s (StartLimitBurst); this loop starts more.
    sd.systemctl("reset-failed", "mux.service", check=False)
    bus = await connect(sd.bus_address)
    try:
        from common import call

        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        start = time.perf_counter()
        sock.connect(str(sd.runtime / "mux" / "mux.sock"))
        # The bus holds the call until the name is owned (the activation file is
        # installed), so its answer is the first moment mux serves.
        await call(bus, "ListPanes")
        elapsed = time.perf_counter() - start
        sock.close()
        return elapsed
    finally:
        bus.disconnect()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    reason = _why_not()
    if reason is not None:
        print(f"activation bench skipped: {reason}")
        return 0
    with temp_root() as root:
        sd = UserSystemd(root)
        try:
            install = sd.muxctl("install", "--now")
            if install.returncode != 0:
                raise RuntimeError(install.stderr)
            sd.wait_state("mux.socket", "active")
            mux: list[float] = []
            plain: list[float] = []
            for _ in range(args.runs):  # interleaved, so both see the same machine
                mux.append(asyncio.run(activation_once(sd)))
                plain.extend(python_pass(3))
        finally:
            sd.stop()
    rows = [
        [
            "socket connect -> first D-Bus answer",
            f"{median(mux) * 1000:.1f}",
            f"{percentile(mux, 0.9) * 1000:.1f}",
            str(len(mux)),
        ],
        [
            "python3 -c pass (real interpreter)",
            f"{median(plain) * 1000:.1f}",
            f"{percentile(plain, 0.9) * 1000:.1f}",
            str(len(plain)),
        ],
    ]
    print("socket activation under systemd --user, ms\n")
    print_table(["measure", "median", "p90", "n"], rows)
    ratio = median(mux) / median(plain)
    verdict = "met" if ratio <= GOAL else "missed"
    print(f"\nratio: {ratio:.1f}x python3 -c pass (goal <= {GOAL:.0f}x): {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
