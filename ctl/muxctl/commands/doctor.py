"""muxctl doctor: what is installed and running, which bus is used, what is wrong and the fix.

Each check says ok, warn or fail, with a fix for anything that is not ok.
Exit status 1 when something failed.
"""

import argparse
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from muxctl.commands.command import LocalCommand
from muxctl.commands.status import HELD
from muxctl.output import print_json, unwrap


@dataclass(frozen=True)
class Finding:
    check: str
    status: str  # "ok" | "warn" | "fail"
    detail: str
    fix: str = ""


def _config() -> Finding:
    from mux.config import ConfigError, load_settings
    from mux.system.paths import resolve_paths

    path = resolve_paths().config_file
    try:
        load_settings(path)
    except ConfigError as e:
        return Finding("configuration", "fail", str(e), f"correct {path}")
    where = str(path) if path.exists() else f"defaults ({path} does not exist)"
    return Finding("configuration", "ok", where)


def _runtime_dir() -> Finding:
    from mux.system.paths import RuntimeDirError, check_private_dir, resolve_paths

    runtime = resolve_paths().runtime
    if not runtime.exists():
        return Finding("runtime dir", "ok", f"{runtime} (created when mux starts)")
    try:
        check_private_dir(runtime)
    except RuntimeDirError as e:
        return Finding("runtime dir", "fail", str(e), f"remove {runtime} or fix its mode")
    return Finding("runtime dir", "ok", str(runtime))


def _installed_file(label: str, path: Path) -> Finding:
    if not path.exists():
        return Finding(label, "warn", f"{path} is not installed", "muxctl install")
    text = path.read_text(errors="replace")
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key in ("ExecStart", "Exec") and value:
            program = value.split()[0].strip('"')
            if not os.access(program, os.X_OK):
                return Finding(
                    label,
                    "fail",
                    f"{path} runs {program}, which does not exist",
                    "muxctl install (it rewrites the file for this installation)",
                )
    return Finding(label, "ok", str(path))


def _systemd() -> list[Finding]:
    from muxctl.installation import DBUS_SERVICE_FILE, DESKTOP_ENTRY, xdg_dirs
    from muxctl.systemd_user import manager_reachable, systemctl

    config_home, data_home = xdg_dirs()
    findings = [
        _installed_file("mux.service", config_home / "systemd/user/mux.service"),
        _installed_file("mux.socket", config_home / "systemd/user/mux.socket"),
        _installed_file("D-Bus activation", data_home / "dbus-1/services" / DBUS_SERVICE_FILE),
        _installed_file("desktop entry", data_home / "applications" / DESKTOP_ENTRY),
        _installed_file("KRunner plugin", data_home / "krunner/dbusplugins" / DESKTOP_ENTRY),
    ]
    if not manager_reachable():
        findings.append(
            Finding(
                "systemd",
                "warn",
                "no systemd user manager answers here",
                "nothing to do where there is none: muxctl starts muxd itself",
            )
        )
        return findings
    for unit in ("mux.socket", "mux.service"):
        active = systemctl("is-active", unit).stdout.strip()
        enabled = systemctl("is-enabled", unit).stdout.strip() or "not installed"
        if active == "failed":
            fix = f"journalctl --user -u {unit} says why; systemctl --user restart {unit}"
            findings.append(Finding(unit, "fail", f"{active}, {enabled}", fix))
        else:
            findings.append(Finding(unit, "ok", f"{active}, {enabled}"))
    return findings


def _launchd() -> list[Finding]:
    from muxctl.installation import LAUNCHD_PLIST

    home = Path(os.environ.get("HOME") or Path.home())
    return [_installed_file("launch agent", home / "Library/LaunchAgents" / LAUNCHD_PLIST)]


def _service() -> list[Finding]:
    from mux.system.busaddr import choose_bus
    from mux.system.paths import resolve_paths
    from muxctl.client import connect
    from muxctl.errors import CtlError, NotRunning

    choice = choose_bus(resolve_paths())
    findings = [Finding("bus", "ok", f"the {choice.kind} bus, {choice.address}")]
    try:
        client = connect(autostart=False)
    except NotRunning as e:
        from muxctl.not_running import how_to_start

        findings.append(Finding("service", "warn", str(e), how_to_start()))
        return findings
    except CtlError as e:
        findings.append(Finding("service", "fail", e.message, "see the message"))
        return findings
    try:
        version = client.get_property("Version")
        (panes,) = client.call("ListPanes")
        (hosts,) = client.call("ListHosts")
        (problems,) = client.call("ListRestoreProblems")
    finally:
        client.close()
    findings.append(Finding("service", "ok", f"mux {version}, {len(panes)} panes"))
    findings += [_not_restored(unwrap(problem)) for problem in problems]
    held = sorted(pane["id"] for pane in map(unwrap, panes) if pane["state"] == HELD)
    if held:
        ids = " ".join(map(str, held))
        detail = f"{len(held)} restored panes wait to start: {ids}"
        findings.append(Finding("held panes", "ok", detail, "muxctl start ID, or --all"))
    findings += [_host(unwrap(host)) for host in hosts]
    return findings


def _not_restored(problem: dict[str, Any]) -> Finding:
    """A pane of the last session that mux could not start again: named, and a problem
    (its place holder counts as exited, which is not "ok")."""
    import shlex

    if problem["id"] == 0:  # the whole snapshot was refused (quarantined)
        detail = f"the saved session was not restored: {problem['reason']}"
        return Finding("restore", "fail", detail, "muxctl snapshots lists older snapshots")
    pane_id, program = problem["id"], shlex.join(problem["argv"])
    detail = f"{program} was not restored: {problem['reason']}"
    fix = f"make it startable, then restart mux; or give it up: muxctl kill {pane_id}"
    return Finding(f"pane {pane_id}", "warn", detail, fix)


def _host(host: dict[str, Any]) -> Finding:
    """A host this mux drives: its link says whether ssh, mux there and forwarding work."""
    name, destination, error = host["name"], host["destination"], host["last_error"]
    label = f"host {name}"
    if host["state"] == "up":
        return Finding(label, "ok", f"{destination}: ssh, mux there and forwarding work")
    if host["state"] == "dialing" and not error:
        return Finding(label, "ok", f"{destination}: connecting")
    if "host key" in error:
        fix = f"check the host key of {destination}, then ssh {destination} once to accept it"
    elif "refused the login" in error:
        fix = f"let your key in: ssh-copy-id {destination} (then muxctl hosts rm/add {name})"
    elif "not installed" in error:
        fix = f"install mux on {destination}, or set muxctl = its path in [hosts.{name}]"
    elif "forward" in error:
        fix = f"AllowStreamLocalForwarding yes in the sshd_config of {destination}"
    else:
        fix = f"ssh {destination} muxctl where --json shows what fails"
    status = "fail" if host["state"] == "refused" else "warn"
    return Finding(label, status, f"{destination}: {host['state']}: {error}", fix)


def run(args: argparse.Namespace) -> int:
    findings = [_config(), _runtime_dir()]
    findings += _launchd() if sys.platform == "darwin" else _systemd()
    findings += _service()
    if args.json:
        print_json([asdict(f) for f in findings])
    else:
        from mux.protocol.visible import visible

        for f in findings:  # each on its line: a newline in a saved argv or reason too
            print(f"{f.status:4}  {f.check}: {visible(f.detail)}")
            if f.fix:
                print(f"      fix: {visible(f.fix)}")
    return 1 if any(f.status == "fail" for f in findings) else 0


COMMAND = LocalCommand(
    name="doctor",
    help="check the installation, the bus and the service, and say how to fix problems",
    run=run,
)
