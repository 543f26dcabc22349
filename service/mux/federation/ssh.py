"""The ssh commands of a link, and what ssh's complaints mean; no I/O here.

One link is one ssh master connection (`-M -N`, its control socket in the
host's runtime dir), through which the hub asks the satellite where its mux
serves (`muxctl where --json`) and then forwards the satellite's bus and attach
socket (`-O forward`): one TCP connection and one authentication per dial. ssh
is the user's own (their config, agent and keys); the hub only adds options that
keep it safe and non-interactive: never a password prompt, never an unknown
host key accepted.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

SAFE_OPTIONS = (
    "BatchMode=yes",  # no prompt: there is nobody to answer it
    "StrictHostKeyChecking=yes",  # never accept an unknown or changed host key
    "ExitOnForwardFailure=yes",
    "StreamLocalBindUnlink=yes",  # ssh leaves its socket files behind when it exits
    "StreamLocalBindMask=0177",  # forwarded sockets 0600
    "ServerAliveInterval=10",
    "ServerAliveCountMax=3",
    "ControlPersist=no",
)


def _options(options: Sequence[str]) -> list[str]:
    return [arg for option in options for arg in ("-o", option)]


def master_argv(ssh: Sequence[str], destination: str, control: str) -> list[str]:
    """The master connection: no command, no forward yet; `control` its socket."""
    return [*ssh, "-N", "-M", "-S", control, *_options(SAFE_OPTIONS), "--", destination]


def where_argv(ssh: Sequence[str], destination: str, control: str, muxctl: str) -> list[str]:
    """Ask the satellite where its mux serves (which starts it there if needed)."""
    command = f"{muxctl} where --json"
    return [*ssh, "-S", control, *_options(SAFE_OPTIONS[:2]), "--", destination, command]


def forward_argv(
    ssh: Sequence[str], destination: str, control: str, forwards: Sequence[tuple[str, str]]
) -> list[str]:
    """Add the (local socket, remote socket) forwards to the master."""
    specs = [arg for local, remote in forwards for arg in ("-L", f"{local}:{remote}")]
    return [*ssh, "-S", control, "-O", "forward", *specs, "--", destination]


@dataclass(frozen=True)
class Failure:
    message: str  # for last_error: words a person can act on, no private path
    refused: bool  # authentication or host key: no redial until the host changes


class LinkFailure(Exception):
    """A dial failed, for the reason it carries."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


_HOST_KEY = re.compile(
    r"Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|"
    r"No \S+ host key is known|host key for .* has changed"
)
_AUTH = re.compile(r"Permission denied|Too many authentication failures|no mutual signature")
_FORWARDING = re.compile(r"administratively prohibited|forwarding (is )?disabled", re.IGNORECASE)


def classify(destination: str, stderr: str, *, status: int | None = None) -> Failure:
    """What went wrong, from ssh's stderr (and the remote command's exit status)."""
    if _HOST_KEY.search(stderr):
        return Failure(
            f"the host key of {destination} is unknown or has changed: check it, then "
            f"connect once with ssh {destination} to accept it",
            refused=True,
        )
    if _AUTH.search(stderr):
        return Failure(
            f"{destination} refused the login: no key it accepts (ssh said: Permission denied)",
            refused=True,
        )
    if _FORWARDING.search(stderr):
        return Failure(
            f"the sshd of {destination} does not allow forwarding Unix sockets: set "
            "AllowStreamLocalForwarding (and AllowTcpForwarding) to yes or local in its "
            "sshd_config",
            refused=False,
        )
    if status == 127:
        return Failure(f"mux is not installed on {destination} (muxctl: command not found)", False)
    return Failure(f"ssh {destination}: {last_line(stderr) or 'failed'}", refused=False)


def last_line(stderr: str) -> str:
    """ssh's last complaint, without the noise around it and cut short."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith(("Warning:", "debug"))]
    return lines[-1][:200] if lines else ""
