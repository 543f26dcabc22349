"""A kill storm: SIGKILL of muxd at random moments during its autosave and checkpoint writes,
with 100 panes changing, then a start that restores them; over and over.

Each round: a burst of changes from a warm client — every pane's program is told (SendInput)
to change directory, set its title (OSC 0) and, for half of them, to checkpoint a new
reference through application-resurrection/1; a fifth of the panes are resized — then
muxd gets SIGKILL at a random moment 0-600 ms after the burst began (the autosave's
debounce is 500 ms: the kill lands before, in and after its write, and among the
checkpoints' writes). What the killed muxd leaves running (its private dbus-daemon, the
panes' programs if they outlive the hangup) is killed by its marker (XDG_RUNTIME_DIR in
their environment), so each round starts from the files alone. Then, before muxd starts
again, every file is checked: session.json must parse and validate (the schema muxd
restores with), each checkpoint must read back through muxd's own reader with at least
the generation its program was last told was durable and the snapshot records; nothing
may be in the quarantine nor a session.previous.json appear. muxd is started (plain
muxd on its state directory, as the tests' harness does, no systemd) and timed to the
first ListPanes with every pane of that snapshot running, and on to every program having
said hello and got its offer back (which must be its checkpoint's reference).

Figures: corrupt files (goal 0), panes lost (in the snapshot before the kill, not running
after the start; goal 0), checkpoints not given back (goal 0), the time to come back
(median, p95, max) and the whole run's duration. A round with a problem leaves a copy of
the state directory and muxd's log under /tmp/kill-storm-evidence/.

Run from the repository root: python3 bench/kill_storm.py [--kills N] [--panes N] [--seed N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import shutil
import signal
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dbus_fast.aio import MessageBus
from tests.harness import Service, temp_root

from common import call, connect, median, percentile, print_table, spawn_body
from mux.resurrection.checkpoints import CheckpointProblem, CheckpointStore
from mux.state.schema import Session

KILL_WINDOW_SECONDS = 0.6  # the autosave's debounce (0.5 s) and its write
DIRECTORIES = 8
TIMEOUT = 60.0
EVIDENCE = Path("/tmp/kill-storm-evidence")

# The pane program. Perl, not Python: 100 panes x 1,000 restores are 100,000 starts, and a
# Python interpreter costs ~50 ms of CPU a start here against perl's ~5 ms. The explicit
# launch's endpoint accepts exactly the spawned pid: perl itself says hello.
PANE_PROGRAM = r"""
use strict; use warnings; use IO::Socket::UNIX; use Socket;
my ($name, $bench, $talks) = @ARGV;
$| = 1;
my ($sock, $offer) = (undef, "none");
if ($talks && $ENV{APPLICATION_RESURRECTION_SOCKET}) {
    my $path = $ENV{APPLICATION_RESURRECTION_SOCKET};
    $sock = IO::Socket::UNIX->new(Type => SOCK_STREAM, Peer => $path) or die "connect: $!";
    syswrite $sock, qq({"protocol":"application-resurrection/1","hello":{"application":"storm"}}\n);
    my $answer = <$sock> // "";
    if ($answer =~ /"restore":null/) { $offer = "null" }
    elsif ($answer =~ /"restore":\{"reference":"([^"]*)"\}/) { $offer = "ref:$1" }
    else { chomp $answer; $offer = "error:$answer" }
}
open(my $out, ">", "$bench/offers/.$name") or die; print $out "$$ $offer\n"; close $out;
rename("$bench/offers/.$name", "$bench/offers/$name") or die;
open(my $acks, ">>", "$bench/acks/$name") or die;
while (my $line = <STDIN>) {
    next unless $line =~ /^go (\d+) (\S+)/;
    chdir("$bench/dirs/d$1");
    print "\e]0;$name $2\a";
    next unless $sock;
    syswrite $sock, qq({"checkpoint":{"reference":"$name-$2"}}\n);
    my $answer = <$sock> // "";
    syswrite $acks, "$1 $name-$2\n" if $answer =~ /"generation":(\d+)/;
}
"""


@dataclass
class Figures:
    rounds: int = 0
    corrupt: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    not_given_back: list[str] = field(default_factory=list)
    back: list[float] = field(default_factory=list)  # start -> every pane running
    ready: list[float] = field(default_factory=list)  # start -> READY in the log
    resumed: list[float] = field(default_factory=list)  # start -> every program said hello
    delays: list[float] = field(default_factory=list)
    saved: int = 0  # rounds in which session.json was written between the start and the kill
    cut_session: int = 0  # kills that left a write of session.json half done (its .tmp)
    cut_checkpoint: int = 0  # the same for checkpoints
    checkpoint_litter: int = 0  # checkpoints' temporaries on disk at the end
    acknowledged: int = 0  # checkpoints acknowledged to the programs, all rounds


@dataclass
class Disk:
    """What a round finds on disk after the kill."""

    session: Session | None
    references: dict[str, tuple[int, str]]  # invocation -> (generation, reference)
    problems: list[str]
    cut_session: bool  # a temporary file of a write the kill cut short
    checkpoint_temporaries: set[str]  # muxd removes none of them (session.json's: at start)


class Storm:
    def __init__(self, root: Path, panes: int, rng: random.Random) -> None:
        self.svc = Service(root, bus_address=None, config="kill_grace_seconds = 1\n")
        self.bench = root / "bench"
        for sub in ("offers", "acks", *(f"dirs/d{n}" for n in range(DIRECTORIES))):
            (self.bench / sub).mkdir(parents=True)
        self.program = self.bench / "pane.pl"
        self.program.write_text(PANE_PROGRAM)
        self.names = [f"w{n:03d}" for n in range(panes)]
        self.rng = rng
        self.figures = Figures()
        self.mux_state = self.svc.state / "mux"
        self.generation = 0  # session.json's at the last start
        self.temporaries: set[str] = set()  # checkpoints' at the last kill

    def argv(self, name: str) -> list[str]:
        talks = int(name[1:]) % 2 == 0  # half of the panes checkpoint
        return ["perl", str(self.program), name, str(self.bench), "1" if talks else "0"]

    # -- muxd ------------------------------------------------------------------------

    def start(self) -> float:
        """Start muxd; seconds until READY (restore comes before it)."""
        log = self.svc.log_path
        if log.exists():  # keep one round's log only: it is read at every poll
            log.replace(log.with_suffix(".previous.log"))
        began = time.monotonic()
        self.svc.start(wait=False)
        process = self.svc.process
        assert process is not None
        deadline = began + TIMEOUT
        while "ready:" not in self.svc.log():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"muxd did not become ready:\n{self.svc.log()[-3000:]}")
            time.sleep(0.005)
        self.started = began
        return time.monotonic() - began

    def kill(self) -> None:
        """SIGKILL muxd, then everything it left running, found by its marker."""
        process = self.svc.process
        assert process is not None
        process.send_signal(signal.SIGKILL)
        process.wait()
        self.kill_leftovers()

    def kill_leftovers(self) -> None:
        deadline = time.monotonic() + TIMEOUT
        while leftovers := self.svc.own_processes():
            for pid in leftovers:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            if time.monotonic() > deadline:
                raise RuntimeError(f"processes that would not die: {leftovers}")
            time.sleep(0.005)

    # -- the files ---------------------------------------------------------------------

    def check_disk(self) -> Disk:
        problems = []
        session = None
        try:
            raw = (self.mux_state / "session.json").read_bytes()
            session = Session.model_validate_json(raw)
        except FileNotFoundError:
            problems.append("session.json is missing")
        except ValueError as e:  # pydantic's ValidationError, the schema's SnapshotError
            problems.append(f"session.json does not validate: {str(e)[:300]}")
        if (self.mux_state / "session.previous.json").exists():
            problems.append("session.previous.json appeared (a fallback)")
        quarantine = self.mux_state / "quarantine"
        if quarantine.is_dir() and any(quarantine.iterdir()):
            problems.append(f"quarantined: {sorted(p.name for p in quarantine.iterdir())}")
        store = CheckpointStore(self.mux_state / "checkpoints")
        references = {}
        for path in sorted(store.directory.glob("*.json")):
            try:
                record = store.read(path.stem)
            except (CheckpointProblem, OSError) as e:
                problems.append(f"checkpoint {path.name}: {e}")
                continue
            references[path.stem] = (record.generation, record.reference)
        if session is not None:
            problems += self.check_checkpoints(session, references)
        return Disk(
            session,
            references,
            problems,
            cut_session=any(self.mux_state.glob(".session.json.*.tmp")),
            checkpoint_temporaries={p.name for p in store.directory.glob(".*.tmp")},
        )

    def check_checkpoints(
        self, session: Session, references: dict[str, tuple[int, str]]
    ) -> list[str]:
        """Each checkpoint on disk is at least as new as the last one its program was told
        was durable, and as the snapshot says."""
        problems = []
        for pane in session.panes:
            name = pane.argv[2]
            generation = references.get(pane.invocation, (0, ""))[0]
            acked = self.last_acknowledged(name)
            if acked > generation:
                problems.append(
                    f"{name}: checkpoint {acked} was acknowledged, {generation} on disk"
                )
            if pane.checkpoint is not None and pane.checkpoint.generation > generation:
                problems.append(
                    f"{name}: the snapshot records checkpoint {pane.checkpoint.generation}, "
                    f"{generation} on disk"
                )
        return problems

    def last_acknowledged(self, name: str) -> int:
        try:
            lines = (self.bench / "acks" / name).read_text().split("\n")
        except FileNotFoundError:
            return 0
        complete = [line for line in lines[:-1] if line]  # a line cut by the kill: not acked
        return max((int(line.split()[0]) for line in complete), default=0)

    def offers(self) -> dict[str, tuple[int, str]]:
        found = {}
        for path in (self.bench / "offers").iterdir():
            if not path.name.startswith("."):
                pid, offer = path.read_text().rstrip("\n").split(" ", 1)
                found[path.name] = (int(pid), offer)
        return found

    # -- a round ---------------------------------------------------------------------

    async def running(self, bus: MessageBus) -> dict[str, int]:
        """Name -> pid of every running pane."""
        (entries,) = await call(bus, "ListPanes")
        return {
            str(e["argv"].value[2]): int(e["pid"].value)
            for e in entries
            if e["state"].value == "running" and len(e["argv"].value) > 2
        }

    async def wait_resumed(self, bus: MessageBus, names: set[str]) -> dict[str, int]:
        """Every program of `names` running and through its hello; their ids."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            running = await self.running(bus)
            offers = self.offers()
            if all(n in running and offers.get(n, (0, ""))[0] == running[n] for n in names):
                return running
            if time.monotonic() > deadline:
                raise RuntimeError(f"not resumed: {sorted(names - set(running))}")
            await asyncio.sleep(0.01)

    async def pane_ids(self, bus: MessageBus) -> dict[str, int]:
        (entries,) = await call(bus, "ListPanes")
        return {str(e["argv"].value[2]): int(e["id"].value) for e in entries}

    async def burst(self, bus: MessageBus, ids: dict[str, int], tag: str) -> None:
        calls = []
        for name in self.names:
            line = f"go {self.rng.randrange(DIRECTORIES)} {tag}\r".encode()
            calls.append(call(bus, "SendInput", "tay", [ids[name], line]))
        for name in self.rng.sample(self.names, len(self.names) // 5):
            size = [self.rng.randint(20, 50), self.rng.randint(60, 160)]
            calls.append(call(bus, "Resize", "tqq", [ids[name], *size]))
        await asyncio.gather(*calls, return_exceptions=True)  # the kill cuts some short

    async def setup(self) -> None:
        self.start()
        bus = await connect(self.svc.bus_address)
        try:
            for name in self.names:
                await call(bus, "Spawn", "a{sv}", spawn_body(self.argv(name)))
            await self.wait_resumed(bus, set(self.names))
            (_path, self.generation) = await call(bus, "Snapshot")
        finally:
            bus.disconnect()

    async def round(self, number: int) -> None:
        bus = await connect(self.svc.bus_address)
        try:
            ids = await self.pane_ids(bus)
            delay = self.rng.uniform(0, KILL_WINDOW_SECONDS)
            changes = asyncio.ensure_future(self.burst(bus, ids, f"r{number}"))
            await asyncio.sleep(delay)
            self.kill()
            changes.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await changes
        finally:
            bus.disconnect()
            with contextlib.suppress(Exception):  # its bus is gone with muxd: EOF
                await bus.wait_for_disconnect()
        self.figures.delays.append(delay)
        disk = self.check_disk()
        problems = list(disk.problems)
        self.count_writes(disk)
        self.figures.corrupt += [f"round {number}: {p}" for p in disk.problems]
        self.figures.ready.append(self.start())
        bus = await connect(self.svc.bus_address)
        try:
            expected = {p.argv[2] for p in disk.session.panes} if disk.session else set()
            deadline = time.monotonic() + TIMEOUT
            while not expected <= set(running := await self.running(bus)):
                if time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.002)
            else:
                self.figures.back.append(time.monotonic() - self.started)
            lost = sorted(expected - set(running))
            problems += [f"lost {name}" for name in lost]
            self.figures.lost += [f"round {number}: {name}" for name in lost]
            await self.wait_resumed(bus, expected - set(lost))
            self.figures.resumed.append(time.monotonic() - self.started)
            problems += self.check_offers(number, disk, expected - set(lost))
            # Every pane was in the snapshot taken at the setup, and none closes: one
            # missing from it was dropped by a save, lost as surely.
            dropped = sorted(set(self.names) - expected)
            problems += [f"{name} was not in the snapshot" for name in dropped]
            self.figures.lost += [f"round {number}: {name} not in the snapshot" for name in dropped]
            for name in sorted(set(self.names) - set(await self.running(bus))):
                # Replaced, so that every round has all its panes (a new invocation).
                (self.bench / "acks" / name).unlink(missing_ok=True)
                await call(bus, "Spawn", "a{sv}", spawn_body(self.argv(name)))
            await self.wait_resumed(bus, set(self.names))
        finally:
            bus.disconnect()
        self.figures.rounds += 1
        if problems:
            self.keep_evidence(number, problems)

    def count_writes(self, disk: Disk) -> None:
        f = self.figures
        f.cut_session += disk.cut_session
        f.cut_checkpoint += bool(disk.checkpoint_temporaries - self.temporaries)
        self.temporaries = disk.checkpoint_temporaries
        f.checkpoint_litter = len(self.temporaries)
        if disk.session is not None:
            f.saved += disk.session.generation > self.generation
            self.generation = disk.session.generation
        f.acknowledged = sum(self.last_acknowledged(name) for name in self.names)

    def check_offers(self, number: int, disk: Disk, names: set[str]) -> list[str]:
        """A program whose snapshot records a checkpoint gets that file's reference back."""
        assert disk.session is not None
        offers = self.offers()
        problems = []
        for pane in disk.session.panes:
            name = pane.argv[2]
            if name not in names or pane.checkpoint is None:
                continue
            wanted = "ref:" + disk.references.get(pane.invocation, (0, "?"))[1]
            if offers[name][1] != wanted:
                problems.append(f"{name} got {offers[name][1]!r}, not {wanted!r}")
        self.figures.not_given_back += [f"round {number}: {p}" for p in problems]
        return problems

    def keep_evidence(self, number: int, problems: list[str]) -> None:
        where = EVIDENCE / f"round-{number}"
        shutil.rmtree(where, ignore_errors=True)
        shutil.copytree(self.svc.state, where / "state", symlinks=True)
        for log in (self.svc.log_path, self.svc.log_path.with_suffix(".previous.log")):
            if log.exists():
                shutil.copy(log, where / log.name)
        (where / "problems.txt").write_text("\n".join(problems) + "\n")
        print(f"round {number}: {problems[:3]} (evidence in {where})", file=sys.stderr)

    def close(self) -> None:
        self.svc.stop()
        self.kill_leftovers()


def ms(values: list[float], fraction: float | None = None) -> str:
    if not values:
        return "-"
    value = median(values) if fraction is None else percentile(values, fraction)
    return f"{value * 1000:.0f}"


def report(figures: Figures, panes: int, seconds: float) -> None:
    f = figures
    print(f"kill storm: {f.rounds} SIGKILLs of muxd, {panes} panes changing, {seconds:.0f} s\n")
    print_table(
        ["measure", "value"],
        [
            ["rounds (kill, check, start, restore)", str(f.rounds)],
            ["rounds with session.json written before the kill", str(f.saved)],
            ["kills in a session.json write (its .tmp left)", str(f.cut_session)],
            ["kills in a checkpoint write (a new .tmp left)", str(f.cut_checkpoint)],
            ["checkpoint .tmp files left on disk at the end", str(f.checkpoint_litter)],
            ["checkpoints acknowledged (the last generations)", str(f.acknowledged)],
            ["corrupt files (goal 0)", str(len(f.corrupt))],
            ["panes lost (goal 0)", str(len(f.lost))],
            ["checkpoints not given back (goal 0)", str(len(f.not_given_back))],
            [
                "kill delay after the burst, ms (median / max)",
                f"{ms(f.delays)} / {ms(f.delays, 1)}",
            ],
        ],
    )
    print()
    print_table(
        ["from muxd's start, ms", "median", "p95", "max"],
        [
            ["READY (restore done)", ms(f.ready), ms(f.ready, 0.95), ms(f.ready, 1)],
            ["every pane running (back)", ms(f.back), ms(f.back, 0.95), ms(f.back, 1)],
            ["every program resumed (hello)", ms(f.resumed), ms(f.resumed, 0.95), ms(f.resumed, 1)],
        ],
    )
    for line in (f.corrupt + f.lost + f.not_given_back)[:20]:
        print(line)
    print(f"\nwhole run: {seconds:.0f} s, {seconds / max(f.rounds, 1):.2f} s a round")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--kills", type=int, default=1000)
    parser.add_argument("--panes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--minutes", type=float, default=None, help="stop after this long")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 32)
    print(f"seed {seed}", file=sys.stderr)
    began = time.monotonic()
    with temp_root() as root:
        storm = Storm(root, args.panes, random.Random(seed))
        try:
            asyncio.run(storm.setup())
            for number in range(1, args.kills + 1):
                if args.minutes is not None and time.monotonic() - began > args.minutes * 60:
                    print(f"stopped after {args.minutes:g} minutes", file=sys.stderr)
                    break
                asyncio.run(storm.round(number))
                if number % 25 == 0:
                    rate = (time.monotonic() - began) / number
                    print(f"{number} kills, {rate:.2f} s each", file=sys.stderr)
        except KeyboardInterrupt:
            print("interrupted: the figures so far", file=sys.stderr)
        except Exception:  # a round that could not finish: what it says, and the figures
            traceback.print_exc()
            print("stopped by an error: the figures so far", file=sys.stderr)
        finally:
            storm.close()
    report(storm.figures, args.panes, time.monotonic() - began)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
