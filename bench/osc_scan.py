"""OSC scanner throughput on typical terminal output, beside the floor in the same run.

The data: coloured `ls`-like and log-like lines (SGR sequences) with, at each
prompt, what an integrated shell prints (OSC 133 D, OSC 7, OSC 133 A, a title,
OSC 133 C: five sequences; the command line different every time, the status,
directory and title among a few), cut into 4 KiB reads (what a PTY read returns).
Two mixes: interactive use (a prompt every 40 lines of output) and bulk
output (builds, logs: a prompt every 400 lines). The floor is the least any
scanner must do: one `bytes.find(b"\\x1b]")` loop over the same chunks.
Goal: the scanner at >= 50% of the floor's speed.

Run from the repository root: python3 bench/osc_scan.py [--mb 20] [--rounds 5]
"""

from __future__ import annotations

import argparse
import sys
import time

from common import median
from mux.protocol.osc import OscScanner

CHUNK = 4096


def sample(megabytes: float, lines_per_prompt: int = 40) -> list[bytes]:
    lines = []
    size = 0
    i = 0
    while size < megabytes * 1_000_000:
        if i % lines_per_prompt == 0:
            line = (
                f"\x1b]133;D;{i % 3};mux_token=abc\x07"
                f"\x1b]7;file:///home/user/project{i % 7}\x07"
                f"\x1b]133;A;mux_token=abc\x07\x1b]2;user@host: ~/project{i % 7}\x07$ "
                # every command line differs (what the parse cache cannot help with)
                f"\x1b]133;C;mux_token=abc;cmdline_url=make%20target{i}\x07\r\n"
            )
        elif i % 3 == 0:
            line = f"\x1b[01;34mdirectory{i}\x1b[0m  \x1b[01;32mscript{i}.sh\x1b[0m  notes.txt\r\n"
        else:
            line = f"2026-12-01 12:00:{i % 60:02d} INFO worker {i}: processed request in 12 ms\r\n"
        lines.append(line.encode())
        size += len(lines[-1])
        i += 1
    data = b"".join(lines)
    return [data[k : k + CHUNK] for k in range(0, len(data), CHUNK)]


def floor(chunks: list[bytes]) -> float:
    start = time.perf_counter()
    found = 0
    for chunk in chunks:
        at = chunk.find(b"\x1b]")
        while at >= 0:
            found += 1
            at = chunk.find(b"\x1b]", at + 2)
    return time.perf_counter() - start


def scanner(chunks: list[bytes]) -> float:
    osc = OscScanner(frozenset({"host"}))
    start = time.perf_counter()
    for chunk in chunks:
        osc.feed(chunk)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(
        f"{args.mb:.0f} MB of terminal output in {CHUNK}-byte reads, median of {args.rounds} rounds"
    )
    for name, lines_per_prompt in (("interactive", 40), ("bulk output", 400)):
        chunks = sample(args.mb, lines_per_prompt)
        mb = sum(map(len, chunks)) / 1e6
        floors, scans = [], []
        for _ in range(args.rounds):
            floors.append(floor(chunks))
            scans.append(scanner(chunks))
        floor_rate, scan_rate = mb / median(floors), mb / median(scans)
        print(
            f"{name:12} (a prompt every {lines_per_prompt} lines): floor {floor_rate:7.1f} MB/s, "
            f"scanner {scan_rate:7.1f} MB/s, scanner/floor {scan_rate / floor_rate:.2f} "
            "(goal >= 0.50)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
