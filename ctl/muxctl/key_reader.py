"""Keys read from a terminal in raw mode, as names (`Up`, `C-u`, `M-w`, `PageUp`, `a`);
pure: bytes in, names out. Copy mode binds these names (muxctl.copy_mode).

What a terminal sends: a CSI (`ESC [` ... final byte) or SS3 (`ESC O` and one byte)
sequence for a special key, ESC before a key for Alt, a control byte for Ctrl and a
letter, UTF-8 for the rest. A sequence cut by the end of a read is kept for the next.
"""

_CSI_NAMES = {
    b"A": "Up",
    b"B": "Down",
    b"C": "Right",
    b"D": "Left",
    b"H": "Home",
    b"F": "End",
    b"1~": "Home",
    b"7~": "Home",
    b"4~": "End",
    b"8~": "End",
    b"5~": "PageUp",
    b"6~": "PageDown",
    b"2~": "Insert",
    b"3~": "Delete",
}
_CONTROL_NAMES = {0x00: "C-Space", 0x09: "Tab", 0x0D: "Enter", 0x0A: "Enter", 0x7F: "BSpace"}


def control_name(byte: int) -> str:
    """The name of a C0 control byte or DEL (`C-a`, `Enter`, `BSpace`)."""
    if byte in _CONTROL_NAMES:
        return _CONTROL_NAMES[byte]
    if byte == 0x08:
        return "BSpace"
    if byte == 0x1B:
        return "Escape"
    return "C-" + chr(byte + 0x60) if byte < 0x20 else chr(byte)


class KeyReader:
    def __init__(self) -> None:
        self._pending = b""

    def feed(self, data: bytes, final: bool = True) -> list[str]:
        """The keys in `data` (after what was kept of the last read). `final`: nothing
        more is coming now, so a lone ESC is the Escape key, not the start of one."""
        data, self._pending = self._pending + data, b""
        keys: list[str] = []
        at = 0
        while at < len(data):
            byte = data[at]
            if byte == 0x1B:
                taken = _escape(data, at, final)
                if taken is None:
                    self._pending = data[at:]
                    break
                key, at = taken
                if key:
                    keys.append(key)
            elif byte < 0x20 or byte == 0x7F:
                keys.append(control_name(byte))
                at += 1
            else:
                end = _utf8_end(data, at)
                if end is None:
                    self._pending = data[at:]
                    break
                keys.append(data[at:end].decode(errors="replace"))
                at = end
        return keys


def _escape(data: bytes, at: int, final: bool) -> tuple[str, int] | None:
    """The key that starts with the ESC at `at` and where the next starts ("" for a
    sequence no key is named for); None: cut off (not final)."""
    if at + 1 >= len(data):
        return ("Escape", at + 1) if final else None
    second = data[at + 1]
    if second in (0x5B, 0x4F):  # `[` or `O`
        end = at + 2
        if second == 0x4F:
            if end >= len(data):
                return None if not final else ("M-O", end)
            return _CSI_NAMES.get(data[end : end + 1], ""), end + 1
        while end < len(data) and not 0x40 <= data[end] <= 0x7E:
            end += 1
        if end >= len(data):
            return None if not final else ("", len(data))
        return _CSI_NAMES.get(data[at + 2 : end + 1], ""), end + 1
    if second == 0x1B:
        return "Escape", at + 1
    if second < 0x20 or second == 0x7F:
        return "M-" + control_name(second), at + 2
    end = _utf8_end(data, at + 1) or len(data)
    return "M-" + data[at + 1 : end].decode(errors="replace"), end


def _utf8_end(data: bytes, at: int) -> int | None:
    """Where the UTF-8 character at `at` ends (a stray byte is a character of its own);
    None: its last bytes are not in yet."""
    first = data[at]
    length = 1 if first < 0xC0 else 2 if first < 0xE0 else 3 if first < 0xF0 else 4
    if at + length > len(data):
        whole = all(0x80 <= b < 0xC0 for b in data[at + 1 :])
        return None if whole else at + 1
    return at + length
