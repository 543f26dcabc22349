"""The bus socket wrapper that passes OpenAttach's fd: sent once, then closed; never lost."""

from __future__ import annotations

import array
import os
import socket

from mux.system.dbus_adapter import _PatientSocket


def _rights(fd: int) -> list[tuple[int, int, bytes]]:
    return [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]).tobytes())]


def _received_fd(sock: socket.socket) -> int:
    _, ancdata, _, _ = sock.recvmsg(1 << 20, socket.CMSG_SPACE(4))
    ((_, _, data),) = ancdata
    return array.array("i", data)[0]


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def test_a_handed_over_fd_is_closed_once_sent_and_arrives() -> None:
    ours, theirs = socket.socketpair()
    patient = _PatientSocket(ours)
    read_end, write_end = os.pipe()
    patient.close_after_send.add(write_end)
    assert patient.sendmsg([b"reply"], _rights(write_end)) == 5
    assert not _is_open(write_end)
    received = _received_fd(theirs)
    os.write(received, b"through the passed fd")
    assert os.read(read_end, 100) == b"through the passed fd"
    for fd in (received, read_end):
        os.close(fd)


def test_a_full_socket_keeps_the_fds_for_the_next_send() -> None:
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    filler = b"x" * 65536
    while True:  # fill the socket
        try:
            ours.send(filler)
        except BlockingIOError:
            break
    patient = _PatientSocket(ours)
    read_end, write_end = os.pipe()
    patient.close_after_send.add(write_end)
    assert patient.sendmsg([b"reply"], _rights(write_end)) == 0
    assert _is_open(write_end)  # not sent yet, so not closed
    theirs.setblocking(False)
    drained = 0
    while True:  # the peer reads everything queued so far
        try:
            drained += len(theirs.recv(1 << 20))
        except BlockingIOError:
            break
    # dbus-fast goes on with plain send(); the fds ride along.
    assert patient.send(b"reply") == 5
    assert not _is_open(write_end)
    theirs.setblocking(True)
    assert _received_fd(theirs) >= 0
    os.close(read_end)


def test_forget_closes_an_fd_that_was_never_sent() -> None:
    ours, _theirs = socket.socketpair()
    patient = _PatientSocket(ours)
    _read_end, write_end = os.pipe()
    patient.close_after_send.add(write_end)
    patient.forget(write_end)
    assert not _is_open(write_end)
    patient.forget(write_end)  # twice is harmless
