"""Where the key of saved pane contents lives: a real gnome-keyring-daemon on a private
session bus (read back with libsecret's secret-tool), else a 0600 file in the state
directory; a locked keyring is never unlocked (no prompt) and gets nothing created."""

from __future__ import annotations

import base64
import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import secretstorage

from mux.system import sealed
from mux.system.contents_key import (
    KEY_FILE_NAME,
    KEYRING_ATTRIBUTES,
    KEYRING_LABEL,
    KeyFound,
    KeyLocked,
    KeyMissing,
    KeyRefused,
    KeyStore,
    find_key,
    forget,
)
from tests.secret_service import GnomeKeyring, PrivateSessionBus

pytestmark = pytest.mark.skipif(
    shutil.which("gnome-keyring-daemon") is None or shutil.which("secret-tool") is None,
    reason="needs Debian's gnome-keyring and libsecret-tools (scripts/test installs them)",
)
LOOKUP = ("lookup", *(word for pair in KEYRING_ATTRIBUTES.items() for word in pair))


@pytest.fixture
def keyring(keyring_bus: PrivateSessionBus, tmp_path: Path) -> Iterator[GnomeKeyring]:
    keyring = GnomeKeyring(keyring_bus, tmp_path / "keyring")
    try:
        yield keyring
    finally:
        keyring.stop()


@pytest.fixture
def state(tmp_path: Path) -> Path:
    state = tmp_path / "state" / "mux"
    state.mkdir(parents=True, mode=0o700)
    return state


def found(lookup: object) -> KeyFound:
    assert isinstance(lookup, KeyFound), lookup
    return lookup


def mux_items(keyring: GnomeKeyring) -> int:
    """Items of mux's in every collection, locked ones too (SearchItems lists both)."""
    with keyring.connection() as connection:
        return len(list(secretstorage.search_items(connection, KEYRING_ATTRIBUTES)))


def test_the_key_is_made_in_the_keyring_and_another_client_reads_it(
    keyring: GnomeKeyring, state: Path
) -> None:
    first = found(find_key(state, create=True, bus_address=keyring.bus.address))
    assert (first.store, first.created) == (KeyStore.KEYRING, True)
    assert len(first.key) == sealed.KEY_BYTES

    lookup = keyring.secret_tool(*LOOKUP)
    assert lookup.returncode == 0, lookup.stderr
    assert base64.b64decode(lookup.stdout, validate=True) == first.key
    listing = keyring.secret_tool("search", "--all", *LOOKUP[1:])
    assert f"label = {KEYRING_LABEL}" in listing.stdout.decode()

    again = found(find_key(state, create=True, bus_address=keyring.bus.address))
    assert (again.key, again.store, again.created) == (first.key, KeyStore.KEYRING, False)
    assert mux_items(keyring) == 1
    assert not (state / KEY_FILE_NAME).exists()


def test_without_a_secret_service_the_key_is_a_private_file(
    keyring_bus: PrivateSessionBus, state: Path
) -> None:
    first = found(find_key(state, create=True, bus_address=keyring_bus.address))
    assert (first.store, first.created) == (KeyStore.FILE, True)
    path = state / KEY_FILE_NAME
    assert path.read_bytes() == first.key
    status = path.stat()
    assert (status.st_mode & 0o777, status.st_uid) == (0o600, os.geteuid())

    for address in (keyring_bus.address, None, f"unix:path={state / 'no-bus-here'}"):
        again = found(find_key(state, create=True, bus_address=address))
        assert (again.key, again.store, again.created) == (first.key, KeyStore.FILE, False)


def test_nothing_is_made_when_not_asked_to(keyring: GnomeKeyring, state: Path) -> None:
    assert isinstance(find_key(state, create=False, bus_address=keyring.bus.address), KeyMissing)
    assert isinstance(find_key(state, create=False, bus_address=None), KeyMissing)
    assert mux_items(keyring) == 0
    assert list(state.iterdir()) == []


def test_a_locked_keyring_is_reported_never_unlocked_and_gets_nothing(
    keyring: GnomeKeyring, state: Path
) -> None:
    keyring.lock()
    with _watching_for_unlocks(keyring.bus) as unlock_calls:
        lookup = find_key(state, create=True, bus_address=keyring.bus.address)
    assert isinstance(lookup, KeyLocked), lookup
    assert "locked" in lookup.problem
    assert unlock_calls == [], "mux asked the keyring to unlock (a prompt)"
    assert keyring.is_locked()
    assert mux_items(keyring) == 0
    assert not (state / KEY_FILE_NAME).exists()


def test_a_file_key_is_used_while_the_keyring_is_locked_then_moves_into_it(
    keyring_bus: PrivateSessionBus, tmp_path: Path, state: Path
) -> None:
    """The file stays the key's home until the keyring can take it: contents sealed with
    it open throughout, and no second key is ever made."""
    made = found(find_key(state, create=True, bus_address=keyring_bus.address))
    assert made.store is KeyStore.FILE
    blob = sealed.seal(made.key, b"old output", b"pane 1")

    keyring = GnomeKeyring(keyring_bus, tmp_path / "keyring")
    try:
        keyring.lock()
        locked = found(find_key(state, create=True, bus_address=keyring_bus.address))
        assert (locked.key, locked.store) == (made.key, KeyStore.FILE)
        assert mux_items(keyring) == 0
    finally:
        keyring.stop()

    keyring = GnomeKeyring(keyring_bus, tmp_path / "keyring")  # a new login: unlocked again
    try:
        moved = found(find_key(state, create=True, bus_address=keyring_bus.address))
        assert (moved.key, moved.store, moved.moved_from_file) == (
            made.key,
            KeyStore.KEYRING,
            True,
        )
        assert not (state / KEY_FILE_NAME).exists()
        lookup = keyring.secret_tool(*LOOKUP)
        assert base64.b64decode(lookup.stdout, validate=True) == made.key
        assert sealed.open_sealed(moved.key, blob, b"pane 1", max_bytes=100) == b"old output"
    finally:
        keyring.stop()


def test_the_keyrings_key_wins_over_a_file_made_while_it_did_not_answer(
    keyring: GnomeKeyring, state: Path
) -> None:
    in_keyring = found(find_key(state, create=True, bus_address=keyring.bus.address))
    path = state / KEY_FILE_NAME
    path.write_bytes(sealed.generate_key())
    path.chmod(0o600)
    again = found(find_key(state, create=True, bus_address=keyring.bus.address))
    assert (again.key, again.store) == (in_keyring.key, KeyStore.KEYRING)
    assert not path.exists()


def test_forget_removes_the_key_from_the_keyring_and_the_file(
    keyring: GnomeKeyring, state: Path
) -> None:
    found(find_key(state, create=True, bus_address=keyring.bus.address))
    path = state / KEY_FILE_NAME
    path.write_bytes(sealed.generate_key())
    path.chmod(0o600)

    forgotten = forget(state, bus_address=keyring.bus.address)
    assert (forgotten.keyring_items_removed, forgotten.file_removed) == (1, True)
    assert (forgotten.locked_items_left, forgotten.problem) == (0, None)
    assert keyring.secret_tool(*LOOKUP).returncode != 0
    assert not path.exists()
    assert isinstance(find_key(state, create=False, bus_address=keyring.bus.address), KeyMissing)
    assert forget(state, bus_address=keyring.bus.address).keyring_items_removed == 0


def test_forget_in_a_locked_keyring_says_what_is_left(keyring: GnomeKeyring, state: Path) -> None:
    found(find_key(state, create=True, bus_address=keyring.bus.address))
    keyring.lock()
    forgotten = forget(state, bus_address=keyring.bus.address)
    assert (forgotten.keyring_items_removed, forgotten.locked_items_left) == (0, 1)
    assert keyring.is_locked()


def test_forget_without_any_bus_removes_the_file(state: Path) -> None:
    found(find_key(state, create=True, bus_address=None))
    forgotten = forget(state, bus_address=None)
    assert forgotten.file_removed
    assert not (state / KEY_FILE_NAME).exists()
    assert forget(state / "never-made", bus_address=None).file_removed is False


def test_a_keyring_item_that_is_not_a_key_is_refused(keyring: GnomeKeyring, state: Path) -> None:
    stored = keyring.secret_tool(
        "store", "--label=someone else's", *LOOKUP[1:], input=b"not a key at all"
    )
    assert stored.returncode == 0, stored.stderr
    lookup = find_key(state, create=True, bus_address=keyring.bus.address)
    assert isinstance(lookup, KeyRefused), lookup
    assert "does not hold a key" in lookup.problem
    assert mux_items(keyring) == 1


@pytest.mark.parametrize(
    ("content", "mode", "problem"),
    [
        (bytes(sealed.KEY_BYTES), 0o644, "may be read or changed by others (mode 0644, not 0600)"),
        (bytes(sealed.KEY_BYTES), 0o620, "mode 0620"),
        (bytes(sealed.KEY_BYTES - 1), 0o600, "is not a key (31 bytes, a key has 32)"),
        (bytes(sealed.KEY_BYTES + 1), 0o600, "is not a key (33 bytes"),
        (b"", 0o600, "is not a key (0 bytes"),
    ],
)
def test_a_key_file_that_must_not_be_used_is_refused_and_kept(
    state: Path, content: bytes, mode: int, problem: str
) -> None:
    path = state / KEY_FILE_NAME
    path.write_bytes(content)
    path.chmod(mode)
    lookup = find_key(state, create=True, bus_address=None)
    assert isinstance(lookup, KeyRefused), lookup
    assert problem in lookup.problem
    assert str(state) not in lookup.problem  # no private path in what a caller may relay
    assert path.read_bytes() == content  # a person decides: it is neither used nor replaced


def test_a_key_file_that_is_a_link_or_a_fifo_is_refused(state: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_bytes(bytes(sealed.KEY_BYTES))
    target.chmod(0o600)
    path = state / KEY_FILE_NAME
    path.symlink_to(target)
    lookup = find_key(state, create=True, bus_address=None)
    assert isinstance(lookup, KeyRefused) and "symbolic link" in lookup.problem
    path.unlink()
    os.mkfifo(path, 0o600)
    lookup = find_key(state, create=True, bus_address=None)
    assert isinstance(lookup, KeyRefused) and "not a regular file" in lookup.problem


@contextlib.contextmanager
def _watching_for_unlocks(keyring_bus: PrivateSessionBus) -> Iterator[list[str]]:
    """dbus-monitor on `bus`: the list gets every Unlock and prompt call made inside."""
    rules = (
        "type='method_call',interface='org.freedesktop.Secret.Service',member='Unlock'",
        "type='method_call',interface='org.freedesktop.Secret.Prompt'",
    )
    calls: list[str] = []
    process = subprocess.Popen(
        ["dbus-monitor", "--address", keyring_bus.address, *rules],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        # It reports its own name lost once it has become a monitor: from then on it sees.
        for line in process.stdout:
            if "member=NameLost" in line:
                break
        else:
            raise AssertionError("dbus-monitor did not start")
        yield calls
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=10)
    calls += [line for line in output.splitlines() if line.startswith("method call")]


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_key_file_of_another_user_is_refused(state: Path) -> None:
    path = state / KEY_FILE_NAME
    path.write_bytes(bytes(sealed.KEY_BYTES))
    path.chmod(0o600)
    os.chown(path, 65534, 65534)
    lookup = find_key(state, create=True, bus_address=None)
    assert isinstance(lookup, KeyRefused), lookup
    assert "belongs to another user" in lookup.problem


_SILENT_SERVICE = """
import sys
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import Proxy, open_dbus_connection
connection = open_dbus_connection(bus=sys.argv[1])
Proxy(message_bus, connection).RequestName("org.freedesktop.secrets")
print("ready", flush=True)
sys.stdin.read()  # silent until the test is done with it (it closes stdin, or kills it)
"""


def test_a_secret_service_that_never_answers_is_given_up_and_no_file_is_made(
    keyring_bus: PrivateSessionBus, state: Path
) -> None:
    silent = subprocess.Popen(
        [sys.executable, "-c", _SILENT_SERVICE, keyring_bus.address],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert silent.stdout is not None and silent.stdout.readline() == "ready\n"
        lookup = find_key(state, create=True, bus_address=keyring_bus.address, timeout=0.5)
        assert isinstance(lookup, KeyRefused), lookup
        assert "did not answer within 0.5 s" in lookup.problem
        assert not (state / KEY_FILE_NAME).exists()  # a key may be in it: no second one
    finally:
        silent.kill()
        silent.wait(timeout=10)
