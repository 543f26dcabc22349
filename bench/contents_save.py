"""Saving pane contents: 500 panes x 2,000 lines of coloured output, beside tmux-resurrect.

Each pane is an in-memory PaneView (80x24, the default 1 MiB history ring) fed its own
2,000 coloured lines (log-like and `ls`-like, SGR colours, bold, some lines wider than
80 columns so the terminal wraps them); no muxd. Per pane it times what the event loop
would do (the screen's dump and the history ring's bytes: `PaneView.dump_screen`,
`Scrollback.contents`) and what the worker does (`contents_of`: the history through a
scratch emulator, the lines as text and SGR), and counts the bytes of the contents,
uncompressed and compressed (zlib level 6 and, when installed, zstd level 3).

The reference: tmux-resurrect saves `tmux capture-pane -pe -S -2000` of each pane as plain
text (and tars and gzips the files). A real tmux server (its own socket, no
configuration, 80x24, history-limit 2000) gets the same bytes for a sample of panes
(`--tmux-panes`, 20 by default: `cat` of the pane's output, then `sleep`); the table
shows its bytes per pane, plain and zlib-compressed, the time of one `capture-pane`
client, and how many of the text lines match ours (SGR removed, wrapped lines joined:
`-J`). Nothing is asserted.

Run from the repository root: python3 bench/contents_save.py [--panes 500] [--lines 2000]
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import time
import zlib
from functools import partial

from common import Tmux, make_root, median, percentile, print_table, wait_for
from mux.panes.pane_view import PaneView
from mux.terminal.saved_contents import contents_of

try:
    import zstandard
except ImportError:  # optional: zlib is the standard library's
    zstandard = None  # type: ignore[assignment]

ROWS, COLS = 24, 80
HISTORY_BYTES = 1 << 20  # scrollback_bytes' default
LEVELS = ("DEBUG", "\x1b[32mINFO\x1b[0m", "\x1b[33;1mWARN\x1b[0m", "\x1b[31;1mERROR\x1b[0m")
WORDS = [
    "request",
    "served",
    "cache",
    "miss",
    "retry",
    "upstream",
    "connection",
    "closed",
    "user",
    "session",
    "token",
]
PROMPT = "user@host:~/project$"
SGR = re.compile(r"\x1b\[[0-9;]*m")


def pane_output(seed: int, lines: int) -> bytes:
    rng = random.Random(seed)
    out = []
    for n in range(lines):
        if rng.random() < 0.3:  # ls --color
            names = [
                f"\x1b[{rng.choice(['01;34', '01;32', '0', '01;36'])}m{rng.choice(WORDS)}{n}\x1b[0m"
                for _ in range(rng.randint(2, 6))
            ]
            out.append("  ".join(names))
        else:
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 16)))
            out.append(f"12:{n // 60 % 60:02d}:{n % 60:02d} {rng.choice(LEVELS)} {words}")
    out.append("\x1b[1;32muser@host\x1b[0m:\x1b[1;34m~/project\x1b[0m$ ")
    return "\r\n".join(out).encode()


def fed_view(data: bytes) -> PaneView:
    view = PaneView.blank(ROWS, COLS, HISTORY_BYTES)
    view.scrollback.append(data)
    view.queue_for_emulation(data)
    return view


def save(view: PaneView, lines: int) -> tuple[bytes, float, float]:
    """(contents, seconds on the loop, seconds on the worker)."""
    start = time.perf_counter()
    dump, _ = view.dump_screen()
    history = view.scrollback.contents()
    cut = view.scrollback.total > len(history)
    on_loop = time.perf_counter() - start
    start = time.perf_counter()
    contents = contents_of(
        history, dump, ROWS, COLS, max_lines=lines, max_bytes=64 << 20, history_cut=cut
    )
    return contents, on_loop, time.perf_counter() - start


def _shows_prompt(tmux: Tmux, pane: str) -> bool:
    return PROMPT in tmux.run("capture-pane", "-p", "-t", pane)


def tmux_reference(outputs: list[bytes], lines: int) -> dict[str, list[float]]:
    figures: dict[str, list[float]] = {"bytes": [], "zlib": [], "seconds": [], "same": []}
    files = make_root("contents-b-")
    with Tmux("contents-bench") as tmux:
        tmux.run("set-option", "-g", "history-limit", str(lines))
        panes = []
        for n, data in enumerate(outputs):
            path = files / f"pane{n}"
            path.write_bytes(data)
            pane = tmux.run(
                "new-window", "-d", "-P", "-F", "#{pane_id}", f"cat {path}; exec sleep 100000"
            ).strip()
            panes.append(pane)
        for pane, data in zip(panes, outputs, strict=True):
            wait_for(partial(_shows_prompt, tmux, pane), 30, what=f"tmux pane {pane}'s output")
            start = time.perf_counter()
            text = tmux.run("capture-pane", "-pe", "-S", f"-{lines}", "-t", pane).encode()
            figures["seconds"].append(time.perf_counter() - start)
            figures["bytes"].append(len(text))
            figures["zlib"].append(len(zlib.compress(text, 6)))
            joined = tmux.run("capture-pane", "-pJ", "-S", f"-{lines}", "-t", pane)
            ours = SGR.sub("", save(fed_view(data), lines)[0].decode()).split("\r\n")[:-1]
            theirs = [line.rstrip() for line in joined.rstrip("\n").split("\n")]
            while theirs and not theirs[-1]:
                theirs.pop()
            common = min(len(ours), len(theirs))
            same = sum(
                a.rstrip() == b for a, b in zip(ours[-common:], theirs[-common:], strict=True)
            )
            figures["same"].append(same / max(len(theirs), 1))
    for path in files.iterdir():
        path.unlink()
    files.rmdir()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--panes", type=int, default=500)
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--tmux-panes", type=int, default=20)
    args = parser.parse_args()
    outputs = [pane_output(seed, args.lines) for seed in range(args.panes)]
    loop_s, worker_s, raw, zl, zs = [], [], [], [], []
    for data in outputs:
        contents, on_loop, on_worker = save(fed_view(data), args.lines)
        loop_s.append(on_loop)
        worker_s.append(on_worker)
        raw.append(len(contents))
        zl.append(len(zlib.compress(contents, 6)))
        if zstandard is not None:
            zs.append(len(zstandard.ZstdCompressor(level=3).compress(contents)))
    tmux = tmux_reference(outputs[: args.tmux_panes], args.lines)

    def ms(values: list[float]) -> str:
        return f"{median(values) * 1000:.1f} / {percentile(values, 0.9) * 1000:.1f}"

    def kib(values: list[float] | list[int]) -> str:
        return f"{statistics.mean(values) / 1024:.1f}"

    print(
        f"{args.panes} panes x {args.lines} lines, {COLS}x{ROWS}; "
        f"output {statistics.mean(len(o) for o in outputs) / 1024:.1f} KiB a pane"
    )
    print_table(
        ["per pane", "mux", f"tmux capture-pane -pe ({len(tmux['bytes'])} panes)"],
        [
            ["on the loop, ms (median / p90)", ms(loop_s), "-"],
            ["making the text, ms (median / p90)", ms(worker_s), ms(tmux["seconds"])],
            ["all panes, s", f"{sum(loop_s) + sum(worker_s):.1f}", "-"],
            ["text, KiB", kib(raw), kib(tmux["bytes"])],
            ["zlib -6, KiB", kib(zl), kib(tmux["zlib"])],
            ["zstd -3, KiB", kib(zs) if zs else "-", "-"],
            ["lines the same as tmux -pJ, %", f"{statistics.mean(tmux['same']) * 100:.1f}", ""],
        ],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
