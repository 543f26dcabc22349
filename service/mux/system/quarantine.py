"""Files mux will not read: moved aside with the reason, never repaired, never overwritten."""

import contextlib
import errno
import logging
import os
import time
from pathlib import Path

log = logging.getLogger(__name__)

REASON_XATTR = "user.mux.quarantine.reason"


def quarantine(path: Path, quarantine_dir: Path, reason: str) -> Path:
    """Move `path` into `quarantine_dir` under a timestamped name; returns where it went.

    The reason goes to the log and, where the file system supports it, to the
    extended attribute user.mux.quarantine.reason; its absence breaks nothing.
    """
    quarantine_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for attempt in range(1000):
        suffix = f".{attempt}" if attempt else ""
        target = quarantine_dir / f"{path.name}.{stamp}{suffix}"
        try:
            os.link(path, target)  # fails instead of overwriting an earlier one
        except FileExistsError:
            continue
        except OSError as e:
            if e.errno not in (errno.EXDEV, errno.EPERM, errno.ENOTSUP):
                raise
            # No hard links here: an exclusive rename of the file itself.
            if target.exists():
                continue
            os.rename(path, target)
            break
        os.unlink(path)
        break
    else:
        raise FileExistsError(errno.EEXIST, "no free name in the quarantine")
    _record_reason(target, reason)
    log.error("quarantined %s as %s: %s", path, target, reason)
    return target


def _record_reason(target: Path, reason: str) -> None:
    setxattr = getattr(os, "setxattr", None)
    if setxattr is None:
        with contextlib.suppress(ImportError, OSError):
            import xattr  # type: ignore[import-not-found]  # macOS, when installed

            xattr.setxattr(str(target), REASON_XATTR, reason.encode())
        return
    with contextlib.suppress(OSError):  # ENOTSUP on tmpfs and others: the log has it
        setxattr(target, REASON_XATTR, reason.encode())
