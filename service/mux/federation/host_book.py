"""The hosts a hub knows: `[hosts.NAME]` in config.toml, and those added with AddHost,
kept in `<state>/hosts.json` (written durably: a crash never leaves half a file)."""

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from mux.config import Settings
from mux.protocol.errors import InvalidArgument, Unavailable
from mux.protocol.hosts import DEFAULT_REMOTE_MUXCTL, check_destination, check_host_name
from mux.system.durable import DurableWriteError, durable_write
from mux.system.json_file import MIB, JsonFileKind, read_json_object

log = logging.getLogger(__name__)

HOSTS_FORMAT = 1
# A name and a destination per host, a few hundred bytes: 4 MiB is thousands of hosts.
HOSTS_FILE = JsonFileKind("the hosts file", 4 * MIB, max_depth=4)


@dataclass(frozen=True)
class Host:
    name: str
    destination: str
    muxctl: str  # the command that runs muxctl there (config.toml only)
    from_config: bool


class HostBook:
    def __init__(self, settings: Settings, file: Path) -> None:
        self._file = file
        self._configured = {
            name: Host(name, host.destination, host.muxctl, True)
            for name, host in settings.hosts.items()
        }
        self._added: dict[str, Host] = {}

    def load(self) -> None:
        """Read the hosts added before; a file that cannot be read is logged and left
        alone (the configured hosts still work, and AddHost writes a new one)."""
        try:
            data = read_json_object(self._file, HOSTS_FILE)
            added = data.get("hosts") if data.get("format") == HOSTS_FORMAT else None
            if not isinstance(added, dict):
                raise ValueError("it is not a hosts file of this mux")
            for name, destination in added.items():
                if not isinstance(destination, str):
                    raise ValueError(f"host {name[:80]!r} has no destination")
                check_host_name(name)
                check_destination(destination)
                self._added[name] = Host(name, destination, DEFAULT_REMOTE_MUXCTL, False)
        except FileNotFoundError:
            return
        except (OSError, ValueError, InvalidArgument) as e:  # MalformedJson is a ValueError
            log.error("the added hosts could not be read (%s); only configured hosts are used", e)
            self._added.clear()

    def hosts(self) -> list[Host]:
        merged = {**self._added, **self._configured}  # the configuration wins
        return [merged[name] for name in sorted(merged)]

    def get(self, name: str) -> Host:
        host = self._configured.get(name) or self._added.get(name)
        if host is None:
            raise InvalidArgument(f"there is no host {name[:80]!r} (muxctl hosts lists them)")
        return host

    def add(self, name: str, destination: str) -> Host:
        check_host_name(name)
        if name in self._configured or name in self._added:
            raise InvalidArgument(f"host {name!r} exists already; remove it first to change it")
        host = Host(name, check_destination(destination), DEFAULT_REMOTE_MUXCTL, False)
        self._save({**self._added, name: host})
        self._added[name] = host
        return host

    def remove(self, name: str) -> None:
        self.get(name)
        if name in self._configured:
            raise InvalidArgument(
                f"host {name!r} comes from config.toml: remove its [hosts.{name}] table there"
            )
        remaining = {other: host for other, host in self._added.items() if other != name}
        self._save(remaining)
        self._added = remaining

    def _save(self, added: dict[str, Host]) -> None:
        data = {"format": HOSTS_FORMAT, "hosts": {n: h.destination for n, h in added.items()}}
        try:
            self._file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            durable_write(self._file, json.dumps(data, indent=1, sort_keys=True).encode() + b"\n")
        except (OSError, DurableWriteError) as e:
            log.error("cannot save the hosts in %s: %s", self._file, e)
            detail = e.strerror if isinstance(e, OSError) else "the state directory refused it"
            why = f"the hosts could not be saved ({detail}); nothing changed"
            raise Unavailable(why) from None
