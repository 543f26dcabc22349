"""Key names as tmux's send-keys takes them (`C-c`, `Enter`, `M-x`, `S-Up`, `F5`), and
the bytes an xterm sends for each. Pure: no I/O.

A name is a key, optionally after modifiers `C-` (Control), `M-` (Meta, i.e. Alt) and
`S-` (Shift), in any order; the key is one character or one of NAMED_KEYS (letter
case ignored, as tmux does). Cursor and editing keys are sent as in the normal cursor
mode (`ESC [ A`): programs that switch to the application mode (`ESC O A`) read both.
A modified special key is sent as xterm does (`ESC [ 1 ; 5 A` for C-Up).
"""

from mux.window_keys import control_byte

# The key, and the bytes without modifiers. Aliases are tmux's.
_CSI_LETTER = {"up": "A", "down": "B", "right": "C", "left": "D", "home": "H", "end": "F"}
_CSI_TILDE = {
    "insert": 2,
    "ic": 2,
    "delete": 3,
    "dc": 3,
    "pageup": 5,
    "pgup": 5,
    "ppage": 5,
    "pagedown": 6,
    "pgdn": 6,
    "npage": 6,
    **{
        f"f{n}": code
        for n, code in zip(range(5, 13), (15, 17, 18, 19, 20, 21, 23, 24), strict=True)
    },
}
_SS3_LETTER = {"f1": "P", "f2": "Q", "f3": "R", "f4": "S"}
_PLAIN = {
    "enter": b"\r",
    "escape": b"\x1b",
    "tab": b"\t",
    "space": b" ",
    "bspace": b"\x7f",
    "backspace": b"\x7f",
    "btab": b"\x1b[Z",
}
NAMED_KEYS = sorted({*_CSI_LETTER, *_CSI_TILDE, *_SS3_LETTER, *_PLAIN})
_MODIFIERS = {"c": 4, "m": 2, "s": 1}  # xterm's modifier bits (the parameter is 1 + bits)


def key_bytes(name: str) -> bytes | None:
    """What a terminal sends for the key `name`; None when `name` names no key (tmux
    then types it as text)."""
    bits, key = _split_modifiers(name)
    if not key:
        return None
    lowered = key.lower()
    if len(key) == 1:
        return _character(key, bits)
    if lowered in _PLAIN:
        return _modified_plain(lowered, bits)
    if lowered in _CSI_LETTER:
        letter = _CSI_LETTER[lowered]
        return f"\x1b[1;{1 + bits}{letter}".encode() if bits else f"\x1b[{letter}".encode()
    if lowered in _SS3_LETTER:
        letter = _SS3_LETTER[lowered]
        return f"\x1b[1;{1 + bits}{letter}".encode() if bits else f"\x1bO{letter}".encode()
    if lowered in _CSI_TILDE:
        code = _CSI_TILDE[lowered]
        return f"\x1b[{code};{1 + bits}~".encode() if bits else f"\x1b[{code}~".encode()
    return None


def _split_modifiers(name: str) -> tuple[int, str]:
    bits = 0
    while len(name) > 2 and name[1] == "-" and name[0].lower() in _MODIFIERS:
        bits |= _MODIFIERS[name[0].lower()]
        name = name[2:]
    return bits, name


def _character(char: str, bits: int) -> bytes | None:
    data = char.encode()
    if bits & _MODIFIERS["s"]:
        data = char.upper().encode()
    if bits & _MODIFIERS["c"]:
        control = control_byte(char)
        if control is None:
            return None  # (C-é: no such key; typed as text)
        data = control
    return b"\x1b" + data if bits & _MODIFIERS["m"] else data


def _modified_plain(key: str, bits: int) -> bytes:
    data = _PLAIN[key]
    if key == "tab" and bits & _MODIFIERS["s"]:
        data = b"\x1b[Z"
    elif key == "space" and bits & _MODIFIERS["c"]:
        data = b"\x00"
    return b"\x1b" + data if bits & _MODIFIERS["m"] else data
