"""The key that seals saved pane contents (mux.system.sealed), and where it lives.

Blocking: `secretstorage` speaks D-Bus through jeepney's blocking connection, and a
Secret Service may take seconds to start (D-Bus activation). Call `find_key` and
`forget` on a worker thread, never on the event loop; every D-Bus call is bounded by
`timeout` seconds.

Where the key lives:

* In the Secret Service (`org.freedesktop.secrets`: GNOME Keyring, KWallet, KeePassXC)
  when one answers on `bus_address` and has a default collection: an item labelled
  KEYRING_LABEL with the attributes KEYRING_ATTRIBUTES, its secret the key in base64
  (so it reads as text in Seahorse and from `secret-tool lookup application mux purpose
  pane-contents`).
* Otherwise in `<state>/contents.key`: the key's 32 raw bytes, mode 0600, written durably.
  A file that others may read or change, that is not the user's own, not a regular file
  or not one key long is refused (KeyRefused), never used and never replaced.

Which store holds the key stays stable: the keyring, once it has the key, wins.
* A key in the file and a keyring that answers, unlocked, without one: the file's key is
  moved into the keyring (stored, read back) and the file removed, so contents sealed
  with it still open.
* A key in both (the keyring did not answer at one start): the keyring's is used and the
  file removed; contents sealed with the file's key no longer open.
* A locked keyring is never unlocked here (no Unlock call, so no prompt). Then the file's
  key is used if there is one (it moves when the keyring is unlocked), else KeyLocked:
  ask again later. Nothing is created while the keyring is locked.
* A Secret Service without a default collection (creating one would prompt) counts as
  no Secret Service.

Expected outcomes are results (KeyFound, KeyLocked, KeyMissing, KeyRefused), not
exceptions. The caller keeps a found key in memory for as long as it runs.
"""

import base64
import binascii
import contextlib
import dataclasses
import enum
import errno
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import secretstorage
from jeepney import DBusErrorResponse
from jeepney.bus import get_bus
from jeepney.io.blocking import DBusConnection, prep_socket
from secretstorage.collection import DEFAULT_COLLECTION

from mux.system import sealed
from mux.system.durable import DurableWriteError, durable_remove, durable_write

KEYRING_ATTRIBUTES = {"application": "mux", "purpose": "pane-contents"}
KEYRING_LABEL = "mux: key of saved terminal contents"
KEY_FILE_NAME = "contents.key"
DEFAULT_TIMEOUT = 25.0  # seconds: D-Bus's own default for a method call
_LONGEST_SECRET = 4 * sealed.KEY_BYTES  # the base64 of a key is 44 characters
_IS_LOCKED = "org.freedesktop.Secret.Error.IsLocked"
_one_at_a_time = threading.Lock()  # a lookup's check-then-create is not raced in-process


class KeyStore(enum.StrEnum):
    KEYRING = "keyring"
    FILE = "file"


@dataclasses.dataclass(frozen=True)
class KeyFound:
    key: bytes = dataclasses.field(repr=False)
    store: KeyStore
    created: bool = False  # a new key: nothing sealed before opens with it
    moved_from_file: bool = False


@dataclasses.dataclass(frozen=True)
class KeyLocked:
    """The keyring holds (or would hold) the key but is locked: ask again later."""

    problem: str = "the keyring is locked; saved contents wait until it is unlocked"


@dataclasses.dataclass(frozen=True)
class KeyMissing:
    """No key anywhere (only when not asked to create one)."""

    problem: str = "there is no key of saved contents"


@dataclasses.dataclass(frozen=True)
class KeyRefused:
    """A key cannot be had or used; `problem` says why, for a person."""

    problem: str


KeyLookup = KeyFound | KeyLocked | KeyMissing | KeyRefused


@dataclasses.dataclass(frozen=True)
class Forgotten:
    keyring_items_removed: int = 0
    file_removed: bool = False
    locked_items_left: int = 0  # in a locked keyring: removed once it is unlocked and asked again
    problem: str | None = None


class _Refused(Exception):
    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def key_file(state_dir: Path) -> Path:
    return state_dir / KEY_FILE_NAME


def find_key(
    state_dir: Path, *, create: bool, bus_address: str | None, timeout: float = DEFAULT_TIMEOUT
) -> KeyLookup:
    """The contents key: looked up in the keyring at `bus_address` (None: no bus), else in
    `<state_dir>/contents.key`; made there when missing and `create`. Blocking."""
    path = key_file(state_dir)
    with _one_at_a_time:
        try:
            with _secret_service(bus_address, timeout) as connection:
                collection = _default_collection(connection)
                if collection is None:
                    return _from_file(path, create)
                return _from_keyring(collection, path, create)
        except _Refused as refused:
            return KeyRefused(refused.problem)
        except secretstorage.LockedException:  # locked between the check and the read
            return KeyLocked()


def forget(
    state_dir: Path, *, bus_address: str | None, timeout: float = DEFAULT_TIMEOUT
) -> Forgotten:
    """Removes the key from the keyring (every item of mux's, in every collection that is
    unlocked) and the file. Blocking."""
    removed = locked = 0
    problem = None
    with _one_at_a_time:
        try:
            with _secret_service(bus_address, timeout) as connection:
                if connection is not None:
                    for item in secretstorage.search_items(connection, KEYRING_ATTRIBUTES):
                        if item.is_locked():
                            locked += 1
                        else:
                            item.delete()
                            removed += 1
        except _Refused as refused:
            problem = refused.problem
        except secretstorage.LockedException:
            problem = KeyLocked().problem
        path = key_file(state_dir)
        file_was_there = path.exists() or path.is_symlink()
        if file_was_there:
            try:
                durable_remove(path)
            except DurableWriteError as e:
                return Forgotten(removed, False, locked, str(e))
    return Forgotten(removed, file_was_there, locked, problem)


# -- the Secret Service --------------------------------------------------------


class _BoundedConnection(DBusConnection):  # type: ignore[misc]  # jeepney has no types
    """jeepney's blocking connection, every call given up after `timeout` seconds
    (secretstorage passes none: a hung keyring would hold the thread for ever)."""

    def __init__(self, address: str, timeout: float) -> None:
        self.call_timeout = timeout
        sock = prep_socket(get_bus(address), timeout=timeout)
        try:
            super().__init__(sock)  # says Hello: a call, so bounded too
        except BaseException:
            sock.close()
            raise

    def send_and_get_reply(self, message: Any, *, timeout: float | None = None) -> Any:
        return super().send_and_get_reply(message, timeout=timeout or self.call_timeout)


@contextlib.contextmanager
def _secret_service(bus_address: str | None, timeout: float) -> Iterator[DBusConnection | None]:
    """A connection to the bus when a Secret Service is there or can be started on it,
    else None (no bus at all counts as no Secret Service). A bus or a service that is
    there but fails or does not answer becomes _Refused: a key might be in it, so a file
    made now could be a second key."""
    if bus_address is None:
        yield None
        return
    try:
        connection = _BoundedConnection(bus_address, timeout)
    except TimeoutError:
        raise _Refused(f"the session bus did not answer within {timeout:g} s") from None
    except (OSError, ValueError, RuntimeError, StopIteration):  # no bus there: no keyring
        yield None
        return
    try:
        if not secretstorage.check_service_availability(connection):
            yield None
        else:
            yield connection
    except secretstorage.LockedException:
        raise
    except secretstorage.SecretServiceNotAvailableException as e:  # activation failed
        raise _Refused(f"the Secret Service did not answer ({e})") from None
    except TimeoutError:
        raise _Refused(f"the Secret Service did not answer within {timeout:g} s") from None
    except DBusErrorResponse as e:
        if e.name == _IS_LOCKED:
            raise secretstorage.LockedException(e.name) from None
        raise _Refused(f"the Secret Service refused ({e.name})") from None
    except secretstorage.SecretStorageException as e:  # e.g. an item removed mid-way
        raise _Refused(f"the Secret Service failed ({e})") from None
    finally:
        connection.close()


def _default_collection(connection: DBusConnection | None) -> secretstorage.Collection | None:
    if connection is None:
        return None
    try:
        return secretstorage.Collection(connection, DEFAULT_COLLECTION)
    except secretstorage.ItemNotFoundException:
        return None


def _from_keyring(collection: secretstorage.Collection, path: Path, create: bool) -> KeyLookup:
    if collection.is_locked():
        key = _read_key_file(path)
        return KeyLocked() if key is None else KeyFound(key, KeyStore.FILE)
    items = sorted(collection.search_items(KEYRING_ATTRIBUTES), key=lambda i: i.get_created())
    if items:  # two makers that raced both settle on the oldest
        key = _decode_secret(items[0].get_secret())
        if path.exists() or path.is_symlink():
            _remove_key_file(path)
        return KeyFound(key, KeyStore.KEYRING)
    key = _read_key_file(path)
    if key is not None:
        _store_in_keyring(collection, key)
        _remove_key_file(path)
        return KeyFound(key, KeyStore.KEYRING, moved_from_file=True)
    if not create:
        return KeyMissing()
    key = sealed.generate_key()
    _store_in_keyring(collection, key)
    return KeyFound(key, KeyStore.KEYRING, created=True)


def _store_in_keyring(collection: secretstorage.Collection, key: bytes) -> None:
    item = collection.create_item(
        KEYRING_LABEL, KEYRING_ATTRIBUTES, base64.b64encode(key), replace=False
    )
    if _decode_secret(item.get_secret()) != key:  # read back before a file key is removed
        raise _Refused("the keyring did not keep the key it was given")


def _decode_secret(secret: bytes) -> bytes:
    wrong = _Refused(f"the keyring item {KEYRING_LABEL!r} does not hold a key of mux's")
    if len(secret) > _LONGEST_SECRET:
        raise wrong
    try:
        key = base64.b64decode(secret, validate=True)
    except (binascii.Error, ValueError):
        raise wrong from None
    if len(key) != sealed.KEY_BYTES:
        raise wrong
    return key


# -- the file ------------------------------------------------------------------


def _from_file(path: Path, create: bool) -> KeyLookup:
    key = _read_key_file(path)
    if key is not None:
        return KeyFound(key, KeyStore.FILE)
    if not create:
        return KeyMissing()
    key = sealed.generate_key()
    try:
        durable_write(path, key, mode=0o600)
    except DurableWriteError as e:
        raise _Refused(str(e)) from None
    return KeyFound(key, KeyStore.FILE, created=True)


def _read_key_file(path: Path) -> bytes | None:
    """The key in the file; None when there is no file; _Refused when it must not be used."""
    name = f"the contents key file ({KEY_FILE_NAME})"
    try:
        # O_NOFOLLOW: a link could point anywhere; O_NONBLOCK: a FIFO must not block.
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise _Refused(f"{name} is a symbolic link") from None
        raise _Refused(f"{name} cannot be read ({os.strerror(e.errno or 0)})") from None
    with open(fd, "rb") as file:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise _Refused(f"{name} is not a regular file")
        if status.st_uid != os.geteuid():
            raise _Refused(f"{name} belongs to another user")
        if status.st_mode & 0o077:
            mode = stat.S_IMODE(status.st_mode)
            raise _Refused(f"{name} may be read or changed by others (mode {mode:04o}, not 0600)")
        key = file.read(sealed.KEY_BYTES + 1)
    if len(key) != sealed.KEY_BYTES:
        raise _Refused(f"{name} is not a key ({len(key)} bytes, a key has {sealed.KEY_BYTES})")
    return key


def _remove_key_file(path: Path) -> None:
    try:
        durable_remove(path)
    except DurableWriteError as e:
        raise _Refused(str(e)) from None
