"""`manager_method`: a Manager method's D-Bus signature given to dbus-fast from its one
declaration (mux.protocol.dbus_methods, docs/dbus-api.md#manager-methods)."""

import inspect
from collections.abc import Callable
from typing import Any, TypeVar, cast

from dbus_fast.service import dbus_method
from dbus_fast.signature import get_signature_tree

from mux.protocol.dbus_methods import MANAGER_METHODS

Method = TypeVar("Method", bound=Callable[..., Any])


def manager_method(method: Method) -> Method:
    """`dbus_method()`, with the D-Bus signature of MANAGER_METHODS[method's name].

    dbus-fast reads a method's D-Bus types from its signature's annotations, so
    the Python annotations are replaced by the declared D-Bus types (through
    `__signature__`, which `inspect.signature` honours) before dbus-fast sees them.
    """
    declared = MANAGER_METHODS[method.__name__]
    python = inspect.signature(method)
    this, *arguments = python.parameters.values()
    types = [t.signature for t in get_signature_tree(declared.takes).types]
    if len(arguments) != len(types):
        raise TypeError(f"{method.__name__} takes {len(arguments)} arguments: {declared.takes!r}")
    method.__signature__ = python.replace(  # type: ignore[attr-defined]
        parameters=[
            this,
            *(a.replace(annotation=t) for a, t in zip(arguments, types, strict=True)),
        ],
        return_annotation=declared.returns,
    )
    return cast(Method, dbus_method()(method))
