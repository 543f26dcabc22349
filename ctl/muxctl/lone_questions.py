"""What a pane shown alone asks or says on the line below it, once its attach has given
the terminal back (`:`, `,`, `x`, `&`, a refusal): a key or a line typed there.

The keys come first from those typed ahead (read with the command, `PrefixKeys.take_ahead`)
and what follows the answer is given back for the attach that comes next: nothing typed
quickly after a command is lost between the attach and its question."""

import select
import sys

from mux.protocol.visible import visible
from muxctl.prefix_keys import PrefixKeys, sequence_end
from muxctl.rawterm import RawTerminal, read_keys, window_size, write_within
from muxctl.view_question import Asked, Question

# What ends a typed line (muxctl.view_question): Enter, or giving up.
_LINE_ENDS = frozenset(b"\r\n\x1b\x03\x07")


def one_key(keys: PrefixKeys) -> bytes:
    """The next key (one byte of it): typed ahead, else waited for. b"": the terminal is
    gone."""
    ahead = keys.take_ahead()
    if ahead:
        keys.give_back(ahead[1:])
        return ahead[:1]
    with RawTerminal(0, 1):  # (non-blocking: waited for)
        while True:
            select.select([0], [], [])
            if (key := read_keys(0, 1)) is not None:  # (what follows: the pane's)
                return key


def said(message: str, keys: PrefixKeys) -> None:
    """`message` on the line below (escaped: it may hold what was typed, or muxd's
    words), until a key."""
    _write(f"{visible(message)} (a key goes on)")
    one_key(keys)
    _write("\r\n")


def agreed(question: str, keys: PrefixKeys) -> bool:
    """`question (y/n)` on the line below; only `y` agrees."""
    _write(f"\r\n{question} (y/n) ")
    answer = one_key(keys)
    _write("\r\n")
    return answer in (b"y", b"Y")


def typed_line(prompt: str, keys: PrefixKeys) -> str | None:
    """A line typed after `prompt` on the line below: Enter gives it; Escape, Ctrl-C or
    the terminal gone give None. Backspace and Ctrl-U edit it (muxctl.view_question)."""
    question, given = Question(), list[str]()
    question.ask(Asked(prompt, typed=True), given.append)
    _write("\r\n")
    pending = keys.take_ahead()
    with RawTerminal(0, 1):
        while question.pending():
            _draw(prompt + question.typed)
            if not pending:
                select.select([0], [], [])
                read = read_keys(0)
                if read == b"":
                    return None
                pending = read or b""
            end = next((at + 1 for at, byte in enumerate(pending) if byte in _LINE_ENDS), None)
            end = len(pending) if end is None else end
            given_up = pending[end - 1 : end] == b"\x1b"
            done = question.answer(pending[:end])
            pending = pending[end:]
            if given_up:  # the rest of the key's sequence (an arrow) goes with its Escape
                tail = sequence_end(b"\x1b" + pending)
                pending = pending[tail - 1 :] if tail is not None else b""
            if done is not None:
                done()
        keys.give_back(pending)
    _write("\r\n")
    return given[0] if given else None


def _write(text: str) -> None:
    """`text` on the terminal (raw between the parts of an attach: lines end CR LF)."""
    sys.stdout.write(text)
    sys.stdout.flush()


DRAW_SECONDS = 1.0  # (a terminal that takes nothing: the line is left undrawn)


def _draw(line: str) -> None:
    """The line being typed, on the terminal's row, as wide as it is (its end if longer);
    the terminal is raw and non-blocking here."""
    shown = visible(line)[-max(window_size(1)[1] - 1, 1) :]
    write_within(1, f"\r{shown}\x1b[K".encode(), DRAW_SECONDS)
