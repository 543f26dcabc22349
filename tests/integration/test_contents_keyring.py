"""muxd with a real Secret Service (issue #31): gnome-keyring-daemon on the session bus
muxd serves, unlocked as at a login. The contents key is made in the keyring (read back
with secret-tool, an independent client) and no key file is written; with the keyring
locked at the start, the panes start at once without their old contents, which appear
once the keyring is unlocked (mux never asks for it to be)."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import pytest

from mux.system.contents_key import KEYRING_ATTRIBUTES
from tests.harness import Service, wait_for
from tests.secret_service import GnomeKeyring, PrivateSessionBus

pytestmark = pytest.mark.skipif(
    shutil.which("gnome-keyring-daemon") is None or shutil.which("secret-tool") is None,
    reason="needs Debian's gnome-keyring and libsecret-tools (scripts/test installs them)",
)
LOOKUP = ("lookup", *(word for pair in KEYRING_ATTRIBUTES.items() for word in pair))
CONFIG = "kill_grace_seconds = 0.5\ncontents_save_seconds = 0.5\n"
SECRET = "KEYRING-CONTENTS-MARKER-51c"
PRINT = f"printf '%s%s\\n' {SECRET[:7]} {SECRET[7:]}; exec sleep 900"


def test_the_key_is_in_the_keyring_and_late_contents_appear_once_it_unlocks(
    keyring_bus: PrivateSessionBus, tmp_path: Path, tmp_root: Path
) -> None:
    keyring = GnomeKeyring(keyring_bus, tmp_path / "keyring")
    svc = Service(tmp_root, bus_address=keyring_bus.address, config=CONFIG).start()
    try:
        pane = svc.spawn(["sh", "-c", PRINT])
        svc.wait_screen(pane, SECRET)
        svc.call("Snapshot")
        lookup = keyring.secret_tool(*LOOKUP)
        assert lookup.returncode == 0 and len(base64.b64decode(lookup.stdout)) == 32
        assert not (svc.state / "mux" / "contents.key").exists(), "no file beside it"
        assert svc.stop() == 0

        keyring.lock()  # a login whose keyring is not unlocked yet
        svc.start()
        assert svc.panes()[pane]["state"] == "running", "the restore did not wait"
        svc.wait_screen(pane, SECRET)  # the program's own output, printed again
        assert "── restored" not in svc.screen_text(pane)
        assert keyring.is_locked(), "mux never unlocks it"

        keyring.stop()  # ... and the user logs in: the keyring comes back unlocked
        keyring = GnomeKeyring(keyring_bus, tmp_path / "keyring")
        wait_for(lambda: "── restored" in svc.screen_text(pane), what="the old contents, late")
        assert svc.screen_text(pane).count(SECRET) == 2
        assert "Traceback" not in svc.log()
    finally:
        svc.stop()
        keyring.stop()
