"""Every method of every object mux serves, called with fuzzed arguments on a running muxd.

The methods come from the running service itself: each object under `/` is introspected
(the manager, the search providers, host objects, one pane and one window object of each
kind, the standard interfaces of all of them), so a method added to mux is fuzzed without a
change here. Arguments follow each method's declared in-signature (tests/fuzz/dbus_values.py).
After each batch of calls: muxd runs and answers, every pane no call of the batch named is
still there (and still running if it was), nothing reached muxd's log as a traceback, and
every error reply was one of mux's `org.mux.Mux1.Error.*` or a standard
`org.freedesktop.DBus.Error.*` with a message a person can read.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from dbus_fast import Message, MessageType, Variant
from dbus_fast.introspection import Node
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mux.dbus.errors import GENERIC_ERROR, GENERIC_MESSAGE
from tests.fuzz.conftest import (
    FIGURES,
    NOTES,
    OPTIONS,
    WORDS,
    FuzzBus,
    LogWatch,
    examples,
    time_limit,
)
from tests.fuzz.dbus_values import Hints, arguments, known, object_paths
from tests.harness import Service, assert_readable_message, wait_for

MUX = "org.mux.Mux1"
ROOT = "/org/mux/Mux1"
MANAGER = "org.mux.Mux1.Manager"
CONFIGURED_HOST = "fuzzhost"  # conftest.FUZZ_CONFIG: RemoveHost cannot remove it
BASE_PANES = 3  # live panes each batch starts with
BASE_PROGRAM = ["/bin/cat"]  # a pane program that does nothing with what it is sent but echo it
ALLOWED_ERRORS = ("org.mux.Mux1.Error.", "org.freedesktop.DBus.Error.")

# Methods not fuzzed, and why.
EXCLUDED = {
    # Re-executes the whole service (after running a check program for up to 20 s): every
    # later batch would test an upgrade under way rather than the method called.
    # tests/integration/test_upgrade.py is where upgrades are tested.
    (MANAGER, "Upgrade"),
}
# Methods that start a program: their argv and shell options are made harmless (below).
LAUNCHING = {"Spawn", "SplitPane"}
HARMLESS_PROGRAMS = ("/bin/true", "/nonexistent/mux-fuzz/program")

SLOW_CALL_SECONDS = 2.0
PER_OBJECT = re.compile(r"^/org/mux/Mux1/(pane|window|host)/[^/]+$")


@dataclass(frozen=True)
class Method:
    kind: str  # "pane", "window", "host": on every object of that kind; "": on `path` only
    path: str
    interface: str
    member: str
    signature: str

    def __str__(self) -> str:
        return f"{self.interface}.{self.member}({self.signature})"


def discover(bus: FuzzBus) -> tuple[list[Method], set[str]]:
    """Every method of every object under `/`, and the interface and property names."""
    methods: set[Method] = set()
    names: set[str] = set()
    seen_kinds: set[str] = set()
    paths = ["/"]
    while paths:
        path = paths.pop()
        kind_match = PER_OBJECT.match(path)
        kind = kind_match.group(1) if kind_match else ""
        if kind and kind in seen_kinds:
            continue  # one object of each kind is enough: they all have the same interfaces
        seen_kinds.add(kind)
        reply = bus.call(
            Message(
                destination=MUX,
                path=path,
                interface="org.freedesktop.DBus.Introspectable",
                member="Introspect",
            )
        )
        assert reply.message_type is MessageType.METHOD_RETURN, reply.body
        node = Node.parse(reply.body[0], validate_property_names=False)
        for interface in node.interfaces:
            names.add(interface.name)
            names.update(p.name for p in interface.properties)
            for method in interface.methods:
                if (interface.name, method.name) in EXCLUDED:
                    continue
                signature = "".join(arg.type.signature for arg in method.in_args)
                methods.add(Method(kind, path, interface.name, method.name, signature))
        paths += [f"{path.rstrip('/')}/{child.name}" for child in node.nodes if child.name]
    return sorted(methods, key=str), names


def named_ids(*values: Any) -> set[int]:
    """Every id a call's path and arguments could name: each integer, and each run of
    ASCII digits in a string (a search result id, an object path)."""
    found: set[int] = set()
    for value in values:
        if isinstance(value, bool | float | bytes):
            continue
        if isinstance(value, int):
            found.add(value)
        elif isinstance(value, str):
            for digits in re.findall(r"[0-9]+", value):
                number = digits.lstrip("0") or "0"
                if len(number) <= 20:  # no id is larger than a `t` (int() refuses 4300 digits)
                    found.add(int(number))
        elif isinstance(value, Variant):
            found |= named_ids(value.value)
        elif isinstance(value, dict):
            found |= named_ids(*value.keys(), *value.values())
        elif isinstance(value, list | tuple):
            found |= named_ids(*value)
    return found


def foreign_digits(ids: tuple[int, ...]) -> list[str]:
    """Ids written in digits that are not ASCII (Arabic-Indic, fullwidth): an id parser
    must not take them, and `named_ids` does not count them as naming a pane."""
    return [
        str(n).translate({ord("0") + d: base + d for d in range(10)})
        for n in ids
        for base in (0x0660, 0xFF10)
    ]


def harmless(method: Method, body: list[Any]) -> list[Any]:
    """Spawn's and SplitPane's options with only harmless programs in them.

    A fuzzed `argv` could run any program on this machine: argv[0] becomes /bin/true or a
    path that does not exist (the generated arguments stay), and a `shell` one of those.
    With neither, the launch is a shell launch of `default_shell`, /bin/true in FUZZ_CONFIG.
    """
    if method.member not in LAUNCHING:
        return body
    out = list(body)
    for index, argument in enumerate(out):
        if not isinstance(argument, dict):
            continue
        options = dict(argument)
        argv, shell = options.get("argv"), options.get("shell")
        if isinstance(argv, Variant) and argv.signature == "as" and argv.value:
            program = HARMLESS_PROGRAMS[len(argv.value) % 2]
            options["argv"] = Variant("as", [program, *argv.value[1:]])
        if isinstance(shell, Variant) and shell.signature == "s":
            options["shell"] = Variant("s", HARMLESS_PROGRAMS[len(shell.value) % 2])
        out[index] = options
    return out


@dataclass(repr=False)  # hypothesis prints the arguments of a failing example
class Fuzz:
    """The running muxd the batches are made on, and what each batch starts from."""

    service: Service
    bus: FuzzBus
    log: LogWatch
    methods: list[Method] = field(default_factory=list)
    names: set[str] = field(default_factory=set)
    base: set[int] = field(default_factory=set)
    named: set[int] = field(default_factory=set)  # the ids the last batch named

    def __repr__(self) -> str:
        return "<the fuzzed muxd>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # how hypothesis prints it
        printer.text(repr(self))

    def manager(self, member: str, signature: str = "", body: list[Any] | None = None) -> Any:
        reply = self.bus.call(
            Message(
                destination=MUX,
                path=ROOT,
                interface=MANAGER,
                member=member,
                signature=signature,
                body=body or [],
            )
        )
        assert reply.message_type is MessageType.METHOD_RETURN, (member, reply.body)
        return reply.body

    def panes(self) -> dict[int, str]:
        (entries,) = self.manager("ListPanes")
        return {entry["id"].value: entry["state"].value for entry in entries}

    def prepare(self) -> tuple[dict[int, str], Hints]:
        """Back to BASE_PANES live panes, and nothing a previous batch made; the panes
        there now, and the hints for this batch's values."""
        panes = self.panes()
        # A pane the last batch named is replaced too: what a call did to it (a ^D typed, a
        # signal) may show only later, and the next batch must not see it as unprovoked.
        self.base = {
            pane_id
            for pane_id in self.base
            if panes.get(pane_id) == "running" and pane_id not in self.named
        }
        for pane_id in panes:
            if pane_id not in self.base or panes[pane_id] != "running":
                kill = Message(
                    destination=MUX,
                    path=ROOT,
                    interface=MANAGER,
                    member="Kill",
                    signature="t",
                    body=[pane_id],
                )
                self.bus.call(kill)
        (hosts,) = self.manager("ListHosts")
        for host in hosts:
            if host["name"].value != CONFIGURED_HOST:
                self.manager("RemoveHost", "s", [host["name"].value])
        while len(self.base) < BASE_PANES:
            # The second and third pane split the first one's window: layouts of several panes.
            window = self.panes_window(min(self.base)) if self.base else 0
            options = {"argv": Variant("as", BASE_PROGRAM), "window": Variant("t", window)}
            pane_id, _instance, _path = self.manager("Spawn", "a{sv}", [options])
            self.base.add(pane_id)
        panes = self.panes()
        (windows,) = self.manager("ListWindows")
        layouts = tuple(window["layout"].value for window in windows)
        window_ids = tuple(window["id"].value for window in windows)
        ids = (*panes, *window_ids)
        hints = Hints(
            integers=ids,
            strings=(*WORDS, *sorted(self.names), *layouts, *map(str, ids), *foreign_digits(ids)),
            paths=(
                *(f"{ROOT}/pane/{n}" for n in panes),
                *(f"{ROOT}/window/{n}" for n in window_ids),
                f"{ROOT}/host/{CONFIGURED_HOST}",
            ),
            options=OPTIONS,
        )
        return panes, hints

    def panes_window(self, pane_id: int) -> int:
        (entries,) = self.manager("ListPanes")
        return int(next(e["window"].value for e in entries if e["id"].value == pane_id))

    def path_of(self, method: Method, hints: Hints) -> st.SearchStrategy[str]:
        if not method.kind:
            return st.just(method.path)
        mine = tuple(p for p in hints.paths if p.startswith(f"{ROOT}/{method.kind}/"))
        return known(mine or (method.path,)) | object_paths(Hints())


@pytest.fixture(scope="module")
def fuzz(fuzz_service: Service, fuzz_bus: FuzzBus) -> Iterator[Fuzz]:
    world = Fuzz(fuzz_service, fuzz_bus, LogWatch(fuzz_service))
    world.prepare()  # live panes and windows, for one object of each kind to introspect
    world.methods, world.names = discover(fuzz_bus)
    yield world


def test_discovery_finds_every_kind_of_object(fuzz: Fuzz) -> None:
    """The fuzz covers the manager, pane, window and host objects and both search providers."""
    found = {(m.kind, m.interface) for m in fuzz.methods}
    for expected in [
        ("", MANAGER),
        ("", "org.gnome.Shell.SearchProvider2"),
        ("", "org.kde.krunner1"),
        ("pane", "org.freedesktop.DBus.Properties"),
        ("window", "org.freedesktop.DBus.Properties"),
        ("host", MANAGER),
    ]:
        assert expected in found, f"no {expected} among {sorted(found)}"
    assert not [m for m in fuzz.methods if (m.interface, m.member) in EXCLUDED]


def _call(fuzz: Fuzz, method: Method, path: str, body: list[Any]) -> str:
    """Make the call; a description of what went wrong, or ""."""
    fds = [os.open("/dev/null", os.O_RDONLY)] if "h" in method.signature else []
    try:
        message = Message(
            destination=MUX,
            path=path,
            interface=method.interface,
            member=method.member,
            signature=method.signature,
            body=body,
            unix_fds=fds,
        )
        started = time.monotonic()
        try:
            reply = fuzz.bus.call(message, timeout=60)
        except TimeoutError:
            return "muxd did not answer within 60 s"
        took = time.monotonic() - started
        if took > SLOW_CALL_SECONDS:
            FIGURES[f"dbus calls slower than {SLOW_CALL_SECONDS} s"] += 1
            NOTES.append(f"{took:.1f} s: {path} {method} {body!r:.200}")
    finally:
        for fd in fds:
            os.close(fd)
    FIGURES["dbus calls"] += 1
    if reply.message_type is not MessageType.ERROR:
        return ""
    FIGURES["dbus calls refused with an error"] += 1
    name = reply.error_name or ""
    text = reply.body[0] if reply.body and isinstance(reply.body[0], str) else ""
    if not name.startswith(ALLOWED_ERRORS):
        return f"answered {name}: {text[:2000]}"
    if (name, text) == (GENERIC_ERROR, GENERIC_MESSAGE):
        return "answered with mux's internal error (a bug: the log has its traceback)"
    try:
        assert_readable_message(fuzz.service, text)
    except AssertionError as unreadable:
        return f"answered {name}: {unreadable}"
    return ""


@time_limit("dbus")
@settings(
    max_examples=examples("dbus"),
    deadline=None,
    derandomize=False,
    suppress_health_check=list(HealthCheck),
)
@given(data=st.data())
def test_every_method_with_fuzzed_arguments(fuzz: Fuzz, data: st.DataObject) -> None:
    before, hints = fuzz.prepare()
    FIGURES["dbus examples"] += 1
    named = fuzz.named = set()
    batch: list[str] = []
    for _ in range(data.draw(st.integers(1, 5), label="calls")):
        method = data.draw(st.sampled_from(fuzz.methods), label="method")
        path = data.draw(fuzz.path_of(method, hints), label="path")
        body = harmless(method, data.draw(arguments(method.signature, hints), label="body"))
        named |= named_ids(path, body)
        batch.append(f"{path} {method} {body!r:.3000}")
        fault = _call(fuzz, method, path, body)
        assert not fault, f"{batch[-1]}\n{fault}"
    _check_after(fuzz, before, named, batch)


def _check_after(fuzz: Fuzz, before: dict[int, str], named: set[int], batch: list[str]) -> None:
    calls = "\n".join(batch)
    assert fuzz.service.process is not None
    assert fuzz.service.process.poll() is None, f"muxd exited after:\n{calls}"
    after = fuzz.panes()  # muxd answers
    for pane_id, state in before.items():
        if pane_id in named:
            continue
        assert pane_id in after, f"pane {pane_id}, named by no call, closed after:\n{calls}"
        if state == "running":
            assert after[pane_id] == "running", f"pane {pane_id} exited after:\n{calls}"
    faults = fuzz.log.new_faults()
    assert not faults, f"muxd's log after:\n{calls}\n---\n{faults[-6000:]}"


def test_muxd_stops_cleanly_after_the_fuzz(fuzz: Fuzz) -> None:
    """Runs last in this module: whatever the fuzz left, muxd still stops as it should."""
    fuzz.prepare()
    assert fuzz.service.stop() == 0, fuzz.service.log()[-3000:]
    wait_for(lambda: not fuzz.service.own_processes(), what="muxd's processes to end")
    faults = fuzz.log.new_faults()
    assert not faults, faults[-6000:]
