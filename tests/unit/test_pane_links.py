"""The window view's links across an upgrade (muxctl.pane_links): a link cut is made
again to the same pane at its region's size, while mux's socket takes it, and the
view gives up once mux has not come back in time."""

import socket
import time
from pathlib import Path

import pytest

from muxctl.errors import CtlError
from muxctl.pane_links import PaneLinks


def test_a_cut_link_is_made_again_at_its_size_or_given_up_in_time(tmp_path: Path) -> None:
    path = tmp_path / "mux.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen()
    links = PaneLinks(path)
    try:
        links.match({3: (10, 40), 4: (10, 39)})
        first = links.get(3)
        assert first is not None and sorted(link.pane for link in links) == [3, 4]

        links.interrupted(first, (10, 40))
        assert links.reattaching and links.get(3) is None
        links.match({3: (12, 40), 4: (12, 39)})  # a resize meanwhile: no second link
        assert links.get(3) is None
        links.reattach()
        again = links.get(3)
        assert again is not None and again is not first and not links.reattaching
        assert again._size == (12, 40), "at the size its region has now"
        links.upgrade_over()
        assert links.reattach_until is None

        # mux does not come back: tried until the deadline, then an error that says so.
        server.close()
        path.unlink()
        links.interrupted(again, (12, 40))
        links.reattach()
        assert links.reattaching, "not yet given up"
        links.reattach_until = time.monotonic() - 1
        with pytest.raises(CtlError, match="did not come back after its upgrade"):
            links.reattach()
    finally:
        links.close()
        server.close()
