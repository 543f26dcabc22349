"""Two "machines" on one box: a hub and a satellite joined by a real network link.

Each is a network namespace; a veth pair joins them, with addresses that exist
only inside the two namespaces, so nothing in the machine's own network (nor a
parallel run's pair, which lives in namespaces of its own) can answer for them.
The satellite runs a real sshd with its own host key and config; the client
side is a pinned known_hosts, a key pair and an ssh_config that names every
file, so the machine's ~/.ssh is never read. Faults a federation has to live
with (link down, the hub's address changing, a replaced host key, forwarding
switched off) are methods, done to the real kernel and the real sshd.

The satellite's muxd (`TwoHosts.satellite`) runs in the root network namespace:
Unix sockets are found by path, across network namespaces, and what the tests
exercise is sshd in the satellite namespace forwarding to them.

Where this cannot work (not root, no ip/sshd/nsenter/unshare, namespaces not
permitted) the tests skip and say why. Nothing survives a test: the teardown
kills every process in both namespaces, deletes them and checks they are gone.
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import os
import random
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.harness import Service, outside_environment, pid_alive, temp_root, wait_for

SSHD = "/usr/sbin/sshd"
SSH_PORT = 22  # the namespace is ours: the standard port clashes with nothing
TOOLS = ("ip", "nsenter", "unshare", "ssh", "ssh-keygen")
# The satellite session's PATH after the directory holding muxctl and this python.
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"


def _why_not() -> str | None:
    """Why this machine cannot host the two namespaces, or None when it can."""
    if os.geteuid() != 0:
        return "network namespaces and a second sshd need root"
    for tool in TOOLS:
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    if not os.access(SSHD, os.X_OK):
        return f"{SSHD} (openssh-server) is not installed"
    if shutil.which("muxctl") is None:
        return "muxctl is not installed as a console script (pip install -e .)"
    # Root in a container may still be refused namespaces: ask the kernel itself.
    probe = f"muxprobe-{secrets.token_hex(3)}"
    made = subprocess.run(
        ["ip", "netns", "add", probe], check=False, capture_output=True, text=True
    )
    if made.returncode != 0:
        return f"cannot create a network namespace: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, check=True)
    return None


def skip_unless_possible() -> None:
    reason = _why_not()
    if reason is not None:
        print(f"SKIPPED federation tests: {reason}")
        pytest.skip(reason)


def ip(*args: str) -> str:
    """Run `ip` and return its output; a refusal fails the test with ip's own words."""
    result = subprocess.run(["ip", *args], check=False, capture_output=True, text=True, timeout=30)
    if result.returncode != 0:
        raise AssertionError(f"ip {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def namespaces() -> set[str]:
    """Names of the network namespaces `ip netns` knows (first word of each line)."""
    return {line.split()[0] for line in ip("netns", "list").splitlines() if line.strip()}


def namespace_pids(namespace: str) -> list[int]:
    """Live processes in `namespace` (an already deleted namespace has none we can reach)."""
    result = subprocess.run(
        ["ip", "netns", "pids", namespace], check=False, capture_output=True, text=True, timeout=30
    )
    if result.returncode != 0:
        return []
    return [int(p) for p in result.stdout.split() if pid_alive(int(p))]


_ROUTE_TYPES = {"unicast", "local", "broadcast", "multicast", "anycast", "unreachable"}
_ROUTE_TYPES |= {"blackhole", "prohibit", "throw", "nat"}


def _root_networks() -> list[ipaddress.IPv4Network]:
    """Every IPv4 network the root namespace routes to itself or a neighbour (not `default`)."""
    found = []
    for line in ip("-4", "-o", "route", "show", "table", "all").splitlines():
        words = line.split()
        if words and words[0] in _ROUTE_TYPES:
            words = words[1:]
        if not words or words[0] == "default":
            continue
        with contextlib.suppress(ValueError):
            found.append(ipaddress.IPv4Network(words[0], strict=False))
    return found


def _free_subnet() -> ipaddress.IPv4Network:
    """A 10.213.N.0/24 the root namespace knows nothing of, so that the root namespace
    provably cannot reach it. Two runs picking the same N do not clash: each pair of
    namespaces is a network of its own."""
    used = _root_networks()
    candidates = [ipaddress.IPv4Network(f"10.213.{n}.0/24") for n in range(1, 251)]
    random.shuffle(candidates)
    for subnet in candidates:
        if not any(subnet.overlaps(other) for other in used):
            return subnet
    raise AssertionError(f"every 10.213.N.0/24 is routed in the root namespace: {used}")


def _keygen(path: Path, comment: str) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        check=True,
        capture_output=True,
        timeout=30,
    )


class TwoHosts:
    """A hub namespace and a satellite namespace with sshd; see the module docstring."""

    def __init__(self, root: Path) -> None:
        self.root = root
        tag = secrets.token_hex(3)
        self.hub_namespace = f"muxhub-{tag}"
        self.satellite_namespace = f"muxsat-{tag}"
        # Interface names are at most 15 bytes; each end is only ever in its namespace.
        self.hub_interface = f"vhub-{tag}"
        self.satellite_interface = f"vsat-{tag}"
        self.subnet = _free_subnet()
        hosts = list(self.subnet.hosts())
        self.hub_address = str(hosts[0])
        self.satellite_address = str(hosts[1])
        self._spare_addresses = [str(h) for h in hosts[2:]]
        self.port = SSH_PORT
        self.hub_prefix = ["nsenter", f"--net=/run/netns/{self.hub_namespace}", "--"]
        self.destination = "sat"

        # Where a test builds the hub's Service (Service makes only the subdirectories).
        self.hub_root = root / "hub"
        self.hub_root.mkdir(mode=0o700)
        # The satellite's own XDG environment; its muxd is started by the tests.
        sat_root = root / "sat"
        sat_root.mkdir(mode=0o700)
        self.satellite = Service(sat_root, bus_address=None)
        self.satellite_data = sat_root / "data"
        self.satellite_data.mkdir(mode=0o700)

        self.sshd_dir = root / "sshd"
        self.sshd_dir.mkdir(mode=0o700)
        self.sshd_config = self.sshd_dir / "sshd_config"
        self.sshd_pidfile = self.sshd_dir / "sshd.pid"
        self.sshd_log_path = self.sshd_dir / "sshd.log"
        self.authorized_keys = self.sshd_dir / "authorized_keys"
        self._host_keys = 0
        self.host_key = self._new_host_key()
        self.sshd_process: subprocess.Popen[bytes] | None = None
        self._allow_forwarding = True

        self.identity = root / "client_ed25519"
        _keygen(self.identity, "mux-hub")
        self.authorized_keys.write_text(Path(f"{self.identity}.pub").read_text())
        self.known_hosts = root / "known_hosts"
        self.pin_host_key()
        self.ssh_config = root / "ssh_config"
        self._write_ssh_config()
        self.ssh_command = ["ssh", "-F", str(self.ssh_config)]
        # ssh clients get no agent and no XDG/DBus/MUX variables from the developer.
        self.client_env = {
            k: v for k, v in outside_environment().items() if not k.startswith("SSH_")
        }

    # -- the network -----------------------------------------------------------

    def _build_network(self) -> None:
        ip("netns", "add", self.hub_namespace)
        ip("netns", "add", self.satellite_namespace)
        # Both ends are created straight inside their namespaces: they never exist
        # in the root namespace, even for a moment.
        ip(
            "link", "add", self.hub_interface, "netns", self.hub_namespace,
            "type", "veth", "peer", "name", self.satellite_interface,
            "netns", self.satellite_namespace,
        )  # fmt: skip
        prefix = self.subnet.prefixlen
        for namespace, interface, address in (
            (self.hub_namespace, self.hub_interface, self.hub_address),
            (self.satellite_namespace, self.satellite_interface, self.satellite_address),
        ):
            ip("-n", namespace, "addr", "add", f"{address}/{prefix}", "dev", interface)
            ip("-n", namespace, "link", "set", "lo", "up")
            ip("-n", namespace, "link", "set", interface, "up")

    def link_down(self) -> None:
        """Take the hub's end of the link down: the satellite becomes unreachable."""
        ip("-n", self.hub_namespace, "link", "set", self.hub_interface, "down")

    def link_up(self) -> None:
        ip("-n", self.hub_namespace, "link", "set", self.hub_interface, "up")

    def change_hub_address(self) -> str:
        """Give the hub a new address in the same subnet (the old one is gone) and return it,
        like a laptop that got a new DHCP lease."""
        new = self._spare_addresses.pop(0)
        prefix = self.subnet.prefixlen
        # Delete first: deleting a primary address also deletes the secondaries of
        # its subnet unless promote_secondaries is set.
        ip(
            "-n", self.hub_namespace, "addr", "del",
            f"{self.hub_address}/{prefix}", "dev", self.hub_interface,
        )  # fmt: skip
        ip("-n", self.hub_namespace, "addr", "add", f"{new}/{prefix}", "dev", self.hub_interface)
        self.hub_address = new
        return new

    # -- sshd ------------------------------------------------------------------

    def _new_host_key(self) -> Path:
        self._host_keys += 1
        path = self.sshd_dir / f"host_ed25519_{self._host_keys}"
        _keygen(path, "mux-satellite")
        return path

    def pin_host_key(self) -> None:
        """Trust the current host key (and only it), as a user's first connection would."""
        keytype, key = Path(f"{self.host_key}.pub").read_text().split()[:2]
        host = (
            self.satellite_address if self.port == 22 else f"[{self.satellite_address}]:{self.port}"
        )
        self.known_hosts.write_text(f"{host} {keytype} {key}\n")

    def satellite_path(self) -> str:
        """PATH of a satellite session: where muxctl and this python live, then the system."""
        dirs = [str(Path(shutil.which("muxctl") or sys.executable).parent)]
        dirs.append(str(Path(sys.executable).parent))
        return ":".join([*dict.fromkeys(dirs), SYSTEM_PATH])

    def satellite_session_env(self) -> dict[str, str]:
        """What sshd's SetEnv gives every satellite session."""
        env = {
            name: self.satellite.env[name]
            for name in ("HOME", "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME")
        }
        env["XDG_DATA_HOME"] = str(self.satellite_data)
        env["PATH"] = self.satellite_path()
        return env

    def _write_sshd_config(self) -> None:
        env = self.satellite_session_env()
        for name, value in env.items():
            # SetEnv splits on whitespace; our temp paths never have any.
            assert not any(c.isspace() or c in "\"'" for c in value), f"{name}={value!r}"
        forwarding = "local" if self._allow_forwarding else "no"
        lines = [
            f"ListenAddress {self.satellite_address}",
            f"Port {self.port}",
            f"HostKey {self.host_key}",
            f"PidFile {self.sshd_pidfile}",
            f"AuthorizedKeysFile {self.authorized_keys}",
            "UsePAM no",
            "StrictModes no",
            "PermitRootLogin prohibit-password",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            # -L to a Unix socket needs both (sshd checks each for direct-streamlocal).
            f"AllowTcpForwarding {forwarding}",
            f"AllowStreamLocalForwarding {forwarding}",
            "StreamLocalBindUnlink yes",
            # Keep away from root's real home: no ~/.ssh/rc, no ~/.ssh/environment.
            "PermitUserRC no",
            "PermitUserEnvironment no",
            "X11Forwarding no",
            "PrintMotd no",
            "PrintLastLog no",
            "UseDNS no",
            "LogLevel VERBOSE",
            # Only the first SetEnv line counts, so everything goes on one.
            "SetEnv " + " ".join(f"{name}={value}" for name, value in env.items()),
        ]
        self.sshd_config.write_text("\n".join(lines) + "\n")
        self.sshd_config.chmod(0o600)

    def _start_sshd(self) -> None:
        self._write_sshd_config()
        log = open(self.sshd_log_path, "ab")  # noqa: SIM115
        start = log.tell()
        # A private mount namespace with a tmpfs on /run gives sshd its privilege
        # separation dir (/run/sshd) without touching the machine's /run. nsenter,
        # unshare and sh all exec in place: the pid is sshd's. -t first, so that a
        # bad config is reported as such in the log. -D: no daemonizing; -e: log to
        # stderr, i.e. to sshd.log.
        script = (
            "mount -t tmpfs -o mode=0755 tmpfs /run && mkdir -m 0755 /run/sshd "
            '&& "$0" -t -f "$1" && exec "$0" -D -e -f "$1"'
        )
        argv = [
            "nsenter", f"--net=/run/netns/{self.satellite_namespace}", "--",
            "unshare", "--mount", "--propagation", "private",
            "sh", "-c", script, SSHD, str(self.sshd_config),
        ]  # fmt: skip
        self.sshd_process = subprocess.Popen(
            argv,
            env=outside_environment(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd="/",
            start_new_session=True,
        )
        log.close()
        listening = f"Server listening on {self.satellite_address} port {self.port}"

        def ready() -> bool:
            assert self.sshd_process is not None
            if self.sshd_process.poll() is not None:
                raise AssertionError(
                    f"sshd exited with {self.sshd_process.returncode}:\n{self.sshd_log()}"
                )
            return listening in self.sshd_log(start)

        wait_for(ready, what=f"sshd to log {listening!r}")

    def _stop_sshd(self) -> None:
        """Stop the listening sshd. Like a real restart, established sessions survive
        (they are separate processes); `drop_connections` ends them."""
        process, self.sshd_process = self.sshd_process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def restart_sshd(self, allow_forwarding: bool = True) -> None:
        """Restart sshd; with allow_forwarding=False, -L forwards are refused."""
        self._stop_sshd()
        self._allow_forwarding = allow_forwarding
        self._start_sshd()

    def replace_host_key(self) -> None:
        """The satellite gets a new host key (reinstalled machine, or an impostor);
        known_hosts keeps the old one, so the client must refuse it."""
        self.host_key = self._new_host_key()
        self.restart_sshd(self._allow_forwarding)

    def drop_connections(self) -> None:
        """End every established ssh connection, leaving the listener running."""
        listener = self.sshd_process.pid if self.sshd_process is not None else None
        for pid in namespace_pids(self.satellite_namespace):
            if pid != listener and _cmdline(pid).startswith("sshd:"):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGTERM)

    def sshd_log(self, start: int = 0) -> str:
        try:
            with open(self.sshd_log_path, "rb") as f:
                f.seek(start)
                return f.read().decode(errors="replace")
        except FileNotFoundError:
            return ""

    def _write_ssh_config(self) -> None:
        lines = [
            f"Host {self.destination}",
            f"    HostName {self.satellite_address}",
            f"    Port {self.port}",
            "    User root",
            f"    IdentityFile {self.identity}",
            "    IdentitiesOnly yes",
            # No key from the developer's agent, no multiplexing with their masters.
            "    IdentityAgent none",
            "    ControlMaster no",
            "    ControlPath none",
            f"    UserKnownHostsFile {self.known_hosts}",
            "    GlobalKnownHostsFile /dev/null",
            "    StrictHostKeyChecking yes",
            "    UpdateHostKeys no",
            "    BatchMode yes",
            "    LogLevel ERROR",
            "    ConnectTimeout 5",
        ]
        self.ssh_config.write_text("\n".join(lines) + "\n")
        self.ssh_config.chmod(0o600)  # ssh refuses a config others can write

    # -- running things on the hub ---------------------------------------------

    def run_in_hub(self, argv: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        """Run `argv` to completion in the hub's network namespace; output captured as text,
        never raising on failure (the test looks at the result). kwargs override."""
        options: dict[str, Any] = {
            "check": False,
            "capture_output": True,
            "text": True,
            "timeout": 30,
            "env": self.client_env,
            "stdin": subprocess.DEVNULL,
        }
        options.update(kwargs)
        result: subprocess.CompletedProcess[str] = subprocess.run(  # noqa: PLW1510 (in options)
            [*self.hub_prefix, *argv], **options
        )
        return result

    def ssh(
        self, command: str, *options: str, timeout: float = 30
    ) -> subprocess.CompletedProcess[str]:
        """`ssh [options] sat command`, from the hub."""
        return self.run_in_hub(
            [*self.ssh_command, *options, self.destination, command], timeout=timeout
        )

    def _hub_reaches_sshd(self) -> bool:
        probe = (
            "import socket, sys\n"
            "try:\n"
            f"    socket.create_connection(({self.satellite_address!r}, {self.port}), 2).close()\n"
            "except OSError:\n"
            "    sys.exit(1)\n"
        )
        return self.run_in_hub([sys.executable, "-c", probe]).returncode == 0

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> None:
        self._build_network()
        self._start_sshd()
        wait_for(self._hub_reaches_sshd, what="a TCP connection from the hub to sshd")

    def close(self) -> None:
        """Stop everything, delete the namespaces and check nothing is left. Every step
        runs even when an earlier one fails; the first failure is raised at the end."""
        errors: list[BaseException] = []

        def step(action: Callable[[], object]) -> None:
            try:
                action()
            except Exception as e:  # collected, the first re-raised below
                errors.append(e)

        step(self.satellite.stop)
        step(self._stop_sshd)
        ours = (self.hub_namespace, self.satellite_namespace)
        # Sessions sshd started (and anything they started) are in the satellite
        # namespace, a hub muxd and its ssh clients in the hub's: ending these first
        # leaves stop_background only the satellite processes outside both.
        for namespace in ours:
            step(functools.partial(_kill_all, namespace))
        step(self.satellite.stop_background)
        for namespace in ours:
            step(functools.partial(_delete_namespace, namespace))
        step(self._check_gone)
        if errors:
            raise errors[0]

    def _check_gone(self) -> None:
        left = namespaces() & {self.hub_namespace, self.satellite_namespace}
        assert not left, f"network namespaces survived the test: {left}"
        root_links = ip("-o", "link", "show")
        for interface in (self.hub_interface, self.satellite_interface):
            assert f" {interface}@" not in root_links and f" {interface}:" not in root_links, (
                f"{interface} survived in the root namespace"
            )


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _kill_all(namespace: str) -> None:
    """SIGTERM every process in `namespace`, SIGKILL what is left after 10 s, and wait
    until none is. SIGTERM is repeated every second: OpenSSH 9.2's ssh can miss one
    that arrives just before it blocks in poll() (see test_network.terminate)."""
    last: dict[int, float] = {}

    def none_left(sig: signal.Signals, every: float) -> Callable[[], bool]:
        def check() -> bool:
            pids = namespace_pids(namespace)
            now = time.monotonic()
            for pid in pids:
                if now - last.get(pid, -every) >= every:
                    last[pid] = now
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, sig)
            return not pids

        return check

    try:
        wait_for(none_left(signal.SIGTERM, 1.0), 10, what=f"the processes in {namespace} to end")
    except AssertionError:
        last.clear()
        wait_for(none_left(signal.SIGKILL, 0.0), 5, what=f"{namespace} to be empty after SIGKILL")


def _delete_namespace(namespace: str) -> None:
    if namespace in namespaces():  # absent when setting up failed before creating it
        ip("netns", "del", namespace)


@contextmanager
def two_hosts_session() -> Iterator[TwoHosts]:
    """A started TwoHosts, closed (and checked to be gone) on the way out."""
    with temp_root() as root:
        hosts = TwoHosts(root)
        try:
            hosts.start()
            yield hosts
        finally:
            hosts.close()


@pytest.fixture
def two_hosts() -> Iterator[TwoHosts]:
    skip_unless_possible()
    with two_hosts_session() as hosts:
        yield hosts


@pytest.fixture
def make_two_hosts() -> Callable[[], AbstractContextManager[TwoHosts]]:
    """For a test that must look after the teardown: `with make_two_hosts() as hosts:`."""
    skip_unless_possible()
    return two_hosts_session
