"""Where every Linux package puts what it installs beside the Python code
(packaging/README.md's table): the commands, the systemd units, the D-Bus service and
interfaces, the desktop entries, the man pages, two of the completions and the
upgrade helper. Only the zsh completion's directory differs between distributions."""

from pathlib import Path

from packaging.requirements import Requirement  # pipx's dependency, so the tests' too

ROOT = Path(__file__).resolve().parents[2]

SYSTEM_FILES = (
    "/usr/bin/muxd",
    "/usr/bin/muxctl",
    "/usr/lib/systemd/user/mux.service",
    "/usr/lib/systemd/user/mux.socket",
    "/usr/lib/systemd/user/mux-web.service",  # (off by default: docs/web.md)
    "/usr/lib/systemd/user/mux-web.socket",
    "/usr/share/dbus-1/services/org.mux.Mux1.service",
    *sorted(
        f"/usr/share/dbus-1/interfaces/{xml.name}"
        for xml in (ROOT / "desktop" / "interfaces").glob("*.xml")
    ),
    "/usr/share/applications/org.mux.Mux.desktop",
    "/usr/share/gnome-shell/search-providers/org.mux.Mux.search-provider.ini",
    "/usr/share/krunner/dbusplugins/org.mux.Mux.desktop",
    "/usr/share/man/man1/muxctl.1.gz",
    "/usr/share/man/man1/muxd.1.gz",
    "/usr/share/bash-completion/completions/muxctl",
    "/usr/share/fish/vendor_completions.d/muxctl.fish",
    "/usr/libexec/mux/upgrade-running-muxds",
)
DEBIAN_ZSH_COMPLETION = "/usr/share/zsh/vendor-completions/_muxctl"
FEDORA_ZSH_COMPLETION = "/usr/share/zsh/site-functions/_muxctl"


def on_linux(dependency: str) -> bool:
    """Whether a pyproject dependency applies on Linux (xattr is macOS's only)."""
    marker = Requirement(dependency).marker
    return marker is None or marker.evaluate({"sys_platform": "linux"})
