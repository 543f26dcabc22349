"""A program that asks its terminal where the cursor is (or what it is) gets an answer from
mux while nobody is attached, and only from the attached terminal otherwise."""

from __future__ import annotations

import sys

from mux.protocol import attach as proto
from tests.attach_client import ProtocolClient
from tests.harness import Service

# In raw mode: say "ready", wait for one byte, print "ab" and the question, show the reply.
ASK = r"""
import os, sys, tty
tty.setraw(0)
os.write(1, b"ready\r\n")
os.read(0, 1)
os.write(1, b"ab" + sys.argv[1].encode().decode("unicode_escape").encode())
reply = os.read(0, 64)
os.write(1, b"\r\nreply=" + reply.replace(b"\x1b", b"ESC") + b"\r\n")
os.read(0, 1)
"""


def asking(service: Service, query: str) -> int:
    pane = service.spawn([sys.executable, "-c", ASK, query], rows=10, cols=40)
    service.wait_screen(pane, "ready")
    return pane


def test_cursor_position_and_device_attributes_are_answered(service: Service) -> None:
    for query, expected in (
        (r"\x1b[6n", "reply=ESC[2;3R"),  # after "ab" on the second row: row 2, column 3
        (r"\x1b[c", "reply=ESC[?1;2c"),
        (r"\x1b[5n", "reply=ESC[0n"),
    ):
        pane = asking(service, query)
        service.call("SendInput", "tay", [pane, b"g"])
        service.wait_screen(pane, expected)


def test_with_a_terminal_attached_only_it_answers(service: Service) -> None:
    pane = asking(service, r"\x1b[6n")
    client = ProtocolClient.connect(service.runtime / "mux.sock")
    client.attach(pane)
    client.send(proto.Input(b"g"))
    client.wait_until(lambda: b"\x1b[6n" in client.screen_bytes(), "the question")
    client.send(proto.Input(b"\x1b[7;7R"))  # what the attached terminal would answer
    service.wait_screen(pane, "reply=ESC[7;7R")
    assert "reply=ESC[7;7RESC" not in service.screen_text(pane)  # one answer, not two
