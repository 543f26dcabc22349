"""muxd's exit statuses (sysexits.h), which muxctl and systemd read."""

from typing import Final

EX_UNAVAILABLE: Final = 69  # something a person must fix first; the message says what
EX_ALREADY_RUNNING: Final = 75  # EX_TEMPFAIL: another muxd holds the instance lock
EX_CONFIG: Final = 78  # the configuration is malformed; systemd shows it as "CONFIG"
