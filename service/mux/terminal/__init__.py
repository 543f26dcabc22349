"""Sans-I/O terminal state: screen emulation and raw-byte scrollback."""
