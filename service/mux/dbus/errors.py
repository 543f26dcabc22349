"""The one place where exceptions become D-Bus error replies.

A `MuxError` becomes its own named error with its message. Anything else is a
bug: it is logged with its traceback here, and the caller gets a generic error
that names no path, no line and no OS detail.
"""

import asyncio
import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar, cast

from dbus_fast import DBusError

from mux.protocol.errors import MuxError

log = logging.getLogger(__name__)

GENERIC_ERROR = "org.freedesktop.DBus.Error.Failed"
GENERIC_MESSAGE = "mux hit an internal error; the service log has the details"

# Everything else is answered: extension modules (the emulator) raise
# BaseException subclasses such as pyo3's PanicException.
_CONTROL_FLOW = (KeyboardInterrupt, SystemExit, GeneratorExit, asyncio.CancelledError)

P = ParamSpec("P")
R = TypeVar("R")


def to_dbus_error(exc: BaseException, what: str) -> DBusError:
    if isinstance(exc, DBusError):
        return exc
    if isinstance(exc, MuxError):
        return DBusError(exc.dbus_name, exc.message)
    log.error("unexpected error in %s", what, exc_info=exc)
    return DBusError(GENERIC_ERROR, GENERIC_MESSAGE)


def replies_with_dbus_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Decorate a D-Bus method so that every exception leaves as a proper error reply."""
    what = func.__qualname__
    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def async_wrapper(*args: P.args, **kwargs: P.kwargs) -> Any:
            try:
                return await func(*args, **kwargs)
            except _CONTROL_FLOW:
                raise
            except BaseException as exc:
                raise to_dbus_error(exc, what) from None

        return cast(Callable[P, R], async_wrapper)

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except _CONTROL_FLOW:
            raise
        except BaseException as exc:
            raise to_dbus_error(exc, what) from None

    return wrapper
