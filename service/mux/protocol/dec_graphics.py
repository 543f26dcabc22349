"""xterm's glyphs for the DEC special graphics characters the emulator draws otherwise.

A program that selects the DEC special graphics set (`ESC ( 0` for G0, or `ESC ) 0`
for G1 and then SO) prints line-drawing characters as ASCII. avt draws two of them
unlike xterm (and the VT100's own glyphs): `` ` `` as ♦ (U+2666) where xterm shows ◆
(U+25C6), and `~` as ⋅ (U+22C5) where xterm shows · (U+00B7). Since avt passes any
character outside ASCII through even while the set is in use, those two are rewritten
to xterm's glyphs before the emulator sees them, while the set is in use.

`GraphicsTranslator` follows what is in use through the output: designations of G0
and G1, SO and SI, and the escape sequences and strings around them (a `` ` `` that
ends a CSI sequence, HPA, or that is part of a window title is left alone). Pure: text
in, text out; the state carries over from one piece of output to the next.
"""

import re

XTERM_GLYPHS = {"`": "\u25c6", "~": "\u00b7"}
GRAPHICS = "0"  # the final character that designates DEC special graphics

# What may change the state: ESC (a designation, SO/SI's companions, sequences), SO, SI.
_INTERESTING = re.compile(r"[\x1b\x0e\x0f]")
# Sequences and strings, so that what is inside them is never rewritten.
_TOKEN = re.compile(
    r"\x1b[()*+](?P<charset>.)"  # a designation (G0 to G3)
    r"|\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]"  # CSI
    r"|\x1b[\]P_^X][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC, DCS, APC, PM, SOS, ended
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]"  # any other escape sequence
    r"|(?P<shift>[\x0e\x0f])",  # SO, SI
    re.DOTALL,
)
# What changes the state (the subset of _TOKEN that _follow acts on).
_STATE = re.compile(r"\x1b[()*+](?P<charset>.)|\x1b[78c]|\x1b\[!p|(?P<shift>[\x0e\x0f])")
# The start of a sequence or string that a piece of output ends in the middle of.
_UNFINISHED = re.compile(
    r"\x1b(?:[()*+]|\[[\x30-\x3f]*[\x20-\x2f]*|[\]P_^X][^\x07\x1b]*|[\x20-\x2f]*)?\Z"
)


# At most this much of a sequence begun at the end of a piece is held back for the next
# (a string that long and unended is passed on as it is: nothing to rewrite is lost).
MAX_PENDING = 256


class GraphicsTranslator:
    __slots__ = ("_g0", "_g1", "_pending", "_saved", "_shifted")

    def __init__(self) -> None:
        self._g0 = False  # G0 designated DEC special graphics
        self._g1 = False
        self._shifted = False  # SO: G1 in use
        self._saved = (False, False, False)  # by DECSC (ESC 7), for DECRC (ESC 8)
        self._pending = ""  # the start of a sequence the last piece ended in

    @property
    def in_use(self) -> bool:
        return self._g1 if self._shifted else self._g0

    def translate(self, text: str) -> str:
        """`text` as the emulator is to get it."""
        if self._pending:
            text, self._pending = self._pending + text, ""
        elif (
            not self._g0
            and not self._g1
            and "\x1b(0" not in text
            and "\x1b)0" not in text
            and "\x1b" not in text[-2:]
        ):
            self._follow_shifts(text)  # (the usual case: no graphics in it, nor before)
            return text
        if not _INTERESTING.search(text):
            return self._rewrite(text) if self.in_use else text
        unfinished = _UNFINISHED.search(text)
        if unfinished is not None and len(text) - unfinished.start() <= MAX_PENDING:
            text, self._pending = text[: unfinished.start()], text[unfinished.start() :]
        if "`" not in text and "~" not in text:  # nothing to rewrite: only what changes
            for change in _STATE.finditer(text):  # the state (an ESC ends any string)
                self._follow(change)
            return text
        out: list[str] = []
        at = 0
        for token in _TOKEN.finditer(text):
            plain = text[at : token.start()]
            out.append(self._rewrite(plain) if self.in_use else plain)
            out.append(token[0])
            self._follow(token)
            at = token.end()
        rest = text[at:]
        out.append(self._rewrite(rest) if self.in_use else rest)
        return "".join(out)

    def _follow_shifts(self, text: str) -> None:
        """SO, SI and DECSC in text that designates no graphics, after none did: all that
        may matter later."""
        shift_out, shift_in = text.rfind("\x0e"), text.rfind("\x0f")
        if shift_out != shift_in:
            self._shifted = shift_out > shift_in
        if "\x1b7" in text:
            self._saved = (False, False, self._shifted)

    def _follow(self, token: re.Match[str]) -> None:
        if (charset := token["charset"]) is not None:
            graphics = charset == GRAPHICS
            if token[0][1] == "(":
                self._g0 = graphics
            elif token[0][1] == ")":
                self._g1 = graphics
        elif (shift := token["shift"]) is not None:
            self._shifted = shift == "\x0e"
        elif token[0] in ("\x1bc", "\x1b[!p"):  # RIS, DECSTR: a reset
            self._g0 = self._g1 = self._shifted = False
        elif token[0] == "\x1b7":
            self._saved = (self._g0, self._g1, self._shifted)
        elif token[0] == "\x1b8":
            self._g0, self._g1, self._shifted = self._saved

    @staticmethod
    def _rewrite(text: str) -> str:
        if "`" in text or "~" in text:
            return text.replace("`", XTERM_GLYPHS["`"]).replace("~", XTERM_GLYPHS["~"])
        return text
