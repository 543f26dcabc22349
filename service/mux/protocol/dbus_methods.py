"""The methods of `org.mux.Mux1.Manager` and their D-Bus signatures, declared once.

The service's declarations take their signatures from here (mux.dbus.manager_iface),
and so do muxctl's calls; the contract is docs/dbus-api.md#manager-methods.
"""

from typing import Final, NamedTuple


class MethodSignature(NamedTuple):  # not a dataclass: muxctl's start-up (mux.system.paths)
    takes: str  # the in signature: the arguments, in order
    returns: str  # the out signature ("" for nothing)


MANAGER_METHODS: Final[dict[str, MethodSignature]] = {
    "Spawn": MethodSignature("a{sv}", "tayo"),
    "Kill": MethodSignature("t", ""),
    "KillIf": MethodSignature("tayas", ""),
    "Signal": MethodSignature("ts", ""),
    "SendInput": MethodSignature("tay", ""),
    "Resize": MethodSignature("tqq", ""),
    "SetTitle": MethodSignature("ts", ""),
    "GetScreen": MethodSignature("t", "as"),
    "GetHistory": MethodSignature("tu", "as"),
    "ListPanes": MethodSignature("", "aa{sv}"),
    "ListRestoreProblems": MethodSignature("", "aa{sv}"),
    "OpenAttach": MethodSignature("t", "h"),
    "ListClients": MethodSignature("t", "aa{sv}"),
    "Snapshot": MethodSignature("", "st"),
    "Upgrade": MethodSignature("", ""),
    # Restore and history (docs/dbus-api.md#restore-and-history).
    "Start": MethodSignature("t", ""),
    "ListSnapshots": MethodSignature("", "aa{sv}"),
    "RestoreSnapshot": MethodSignature("ta{sv}", "aa{sv}"),
    "ForgetContents": MethodSignature("", ""),
    # Windows (docs/windows.md).
    "SplitPane": MethodSignature("tsda{sv}", "tayo"),
    "ListWindows": MethodSignature("", "aa{sv}"),
    "SetWindow": MethodSignature("ta{sv}", ""),
    # Federation (docs/federation.md): a satellite's, then a hub's.
    "RegisterLink": MethodSignature("ay", ""),
    "AddHost": MethodSignature("sa{sv}", ""),
    "RemoveHost": MethodSignature("s", ""),
    "ListHosts": MethodSignature("", "aa{sv}"),
}
