"""Keystroke echo through an attaching client: a terminal types, the client shows.

A PTY the probe holds the master of is the terminal; on it runs an attaching client
(`muxctl attach ID`, `tmux attach -t NAME`: the argv after `--`) showing a pane that
runs `ECHO_PROGRAM` (its terminal raw, without the kernel's echo): for every byte it
reads, it prints `@N@` with N counting the bytes, so each keystroke has its own
answer and no redraw of an older one can be taken for it. The probe waits until the
client shows `ready`, prints `ready` on its stdout, then types one key every
--interval seconds for --seconds, each timed from the write to the moment its `@N@`
comes out of the client, and prints the times (ms) as JSON on its last line. It runs
in its own process so that the load's client (its event loop, its GIL) is not in the
figure. A key with no answer within 5 s counts as lost (`lost` in the JSON).

Run by load.py: python3 bench/echo_probe.py --seconds S [--interval I] -- ARGV...
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import select
import signal
import struct
import sys
import termios
import time

# The pane's program (perl, in every Debian): the terminal raw and silent, one answer a
# byte, the count assembled at run time so that the command line never shows `@1@`.
ECHO_PROGRAM = [
    "perl",
    "-e",
    "system('stty', 'raw', '-echo'); $| = 1; print qq(re), qq(ady\\r\\n); my $n = 0;"
    " while (sysread(STDIN, my $c, 1)) { $n++; print qq(\\@$n\\@\\r\\n) }",
]
ANSWER_SECONDS = 5.0
ROWS, COLS = 24, 80


class Terminal:
    """The client on a PTY; what it writes is kept until `take` is asked for a needle."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.pid = 0
        self.master = -1
        self.seen = b""

    def start(self) -> None:
        self.pid, self.master = pty.fork()
        if self.pid == 0:  # the child: the PTY is its controlling terminal
            try:
                os.execvp(self.argv[0], self.argv)
            finally:
                os._exit(127)
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))

    def read_for(self, seconds: float) -> None:
        """Keep the client's output flowing for `seconds` (a client that cannot write
        stalls)."""
        deadline = time.perf_counter() + seconds
        while (left := deadline - time.perf_counter()) > 0:
            self._read(left)

    def take(self, needle: bytes, seconds: float) -> bool:
        """Read until `needle` comes out (True), or `seconds` pass (False); what came
        before it is dropped."""
        deadline = time.perf_counter() + seconds
        while (at := self.seen.find(needle)) < 0:
            left = deadline - time.perf_counter()
            if left <= 0:
                return False
            self._read(left)
        self.seen = self.seen[at + len(needle) :]
        return True

    def _read(self, seconds: float) -> None:
        ready, _, _ = select.select([self.master], [], [], seconds)
        if ready:
            try:
                self.seen += os.read(self.master, 65536)
            except OSError:  # the client is gone: nothing more will come
                time.sleep(seconds)
            self.seen = self.seen[-65536:]

    def type(self, key: bytes) -> None:
        os.write(self.master, key)

    def stop(self) -> None:
        if self.pid:
            os.kill(self.pid, signal.SIGHUP)
            os.waitpid(self.pid, 0)
        os.close(self.master)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("argv", nargs="+")
    args = parser.parse_args()
    terminal = Terminal(args.argv)
    terminal.start()
    times: list[float] = []
    lost = 0
    try:
        if not terminal.take(b"ready", 30):
            print(json.dumps({"error": "the client never showed the pane"}), flush=True)
            return 1
        terminal.read_for(0.2)  # the client's first screen, drawn
        print("ready", flush=True)
        end = time.perf_counter() + args.seconds
        count = 0
        while time.perf_counter() < end:
            count += 1
            started = time.perf_counter()
            terminal.type(b"k")
            if terminal.take(b"@%d@" % count, ANSWER_SECONDS):
                times.append((time.perf_counter() - started) * 1000)
            else:
                lost += 1
            terminal.read_for(max(0.0, started + args.interval - time.perf_counter()))
    finally:
        terminal.stop()
    print(json.dumps({"times": times, "lost": lost}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
