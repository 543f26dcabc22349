"""Pane search for the desktops, on `org.mux.Mux1` (docs/desktop.md#pane-search):
`org.gnome.Shell.SearchProvider2` at `/org/mux/Mux1/SearchProvider` and
`org.kde.krunner1` at `/org/mux/Mux1/KRunner`. Result ids are pane ids in
decimal (ASCII digits only). Activating a result opens a terminal attached to the
pane; KRunner also offers `kill`, which closes it. The search itself, and the
bounds on a query, are mux.panes.search."""

from collections.abc import Callable
from typing import Annotated, Any

from dbus_fast import Variant
from dbus_fast.annotations import DBusSignature
from dbus_fast.service import ServiceInterface, dbus_method

from mux.dbus.errors import replies_with_dbus_errors
from mux.panes.search import PaneFacts, QueryLimits, checked_ids, pane_id_of, search
from mux.panes.table import PaneTable
from mux.protocol.errors import InvalidArgument, NoSuchPane

SEARCH_PROVIDER_PATH = "/org/mux/Mux1/SearchProvider"
KRUNNER_PATH = "/org/mux/Mux1/KRunner"
KILL_ACTION = "kill"
# KRunner's match types (Plasma::QueryMatch::Type).
EXACT_MATCH, POSSIBLE_MATCH = 100, 30

AS = Annotated[list[str], DBusSignature("as")]
S = Annotated[str, DBusSignature("s")]
U = Annotated[int, DBusSignature("u")]
METAS = Annotated[list[dict[str, Variant]], DBusSignature("aa{sv}")]
MATCHES = Annotated[list[list[Any]], DBusSignature("a(sssida{sv})")]
ACTIONS = Annotated[list[list[str]], DBusSignature("a(sss)")]
CONFIG = Annotated[dict[str, Variant], DBusSignature("a{sv}")]


class PaneFinder:
    """What both providers share: the panes as facts, and what activation does."""

    def __init__(
        self, table: PaneTable, open_attached: Callable[[int], bool], limits: QueryLimits
    ) -> None:
        self.table = table
        self.open_attached = open_attached
        self.limits = limits

    def find(self, terms: list[str]) -> list[PaneFacts]:
        """The panes `terms` find; InvalidArgument when the query is out of bounds."""
        wanted = self.limits.checked_terms(terms)
        return search((PaneFacts.of(pane) for pane in self.table), wanted)

    def facts(self, identifiers: list[str]) -> list[PaneFacts]:
        """The panes still there among `identifiers` (a result may be gone since)."""
        found = []
        for identifier in checked_ids(identifiers):
            pane_id = pane_id_of(identifier)
            if pane_id is None:
                continue
            try:
                found.append(PaneFacts.of(self.table.get(pane_id)))
            except NoSuchPane:
                continue
        return found

    def open(self, identifier: str) -> None:
        pane_id = pane_id_of(identifier)
        if pane_id is None:
            raise InvalidArgument(f"{identifier[:40]!r} is not a pane id")
        self.table.get(pane_id)  # NoSuchPane if it is gone
        self.open_attached(pane_id)


class GnomeSearchProvider(ServiceInterface):
    def __init__(self, finder: PaneFinder) -> None:
        super().__init__("org.gnome.Shell.SearchProvider2")
        self._finder = finder

    @dbus_method()
    @replies_with_dbus_errors
    def GetInitialResultSet(self, terms: AS) -> AS:
        return [str(facts.pane_id) for facts in self._finder.find(list(terms))]

    @dbus_method()
    @replies_with_dbus_errors
    def GetSubsearchResultSet(self, previous_results: AS, terms: AS) -> AS:
        # The previous results are not trusted to be current: search again.
        checked_ids(previous_results)
        return [str(facts.pane_id) for facts in self._finder.find(list(terms))]

    @dbus_method()
    @replies_with_dbus_errors
    def GetResultMetas(self, identifiers: AS) -> METAS:
        return [
            {
                "id": Variant("s", str(facts.pane_id)),
                "name": Variant("s", facts.name),
                "description": Variant("s", facts.description),
                "gicon": Variant("s", "utilities-terminal"),
            }
            for facts in self._finder.facts(list(identifiers))
        ]

    @dbus_method()
    @replies_with_dbus_errors
    def ActivateResult(self, identifier: S, terms: AS, timestamp: U) -> None:
        self._finder.open(identifier)

    @dbus_method()
    @replies_with_dbus_errors
    def LaunchSearch(self, terms: AS, timestamp: U) -> None:
        # mux has no window of its own to search in: the best match opens.
        found = self._finder.find(list(terms))
        if found:
            self._finder.open(str(found[0].pane_id))


class KRunner(ServiceInterface):
    def __init__(self, finder: PaneFinder, kill: Callable[[int], None]) -> None:
        super().__init__("org.kde.krunner1")
        self._finder = finder
        self._kill = kill

    @dbus_method()
    @replies_with_dbus_errors
    def Match(self, query: S) -> MATCHES:
        found = self._finder.find(self._finder.limits.query_terms(query))
        matches = []
        for rank, facts in enumerate(found):
            exact = query.strip().casefold() == facts.title.casefold()
            properties = {"subtext": Variant("s", facts.description)}
            relevance = max(0.1, 1.0 - rank * 0.05)
            kind = EXACT_MATCH if exact else POSSIBLE_MATCH
            matches.append(
                [str(facts.pane_id), facts.name, "utilities-terminal", kind, relevance, properties]
            )
        return matches

    @dbus_method()
    @replies_with_dbus_errors
    def Actions(self) -> ACTIONS:
        return [[KILL_ACTION, "Close the pane", "process-stop"]]

    @dbus_method()
    @replies_with_dbus_errors
    def Run(self, match_id: S, action_id: S) -> None:
        if action_id == KILL_ACTION:
            pane_id = pane_id_of(match_id)
            if pane_id is None:
                raise InvalidArgument(f"{match_id[:40]!r} is not a pane id")
            self._kill(pane_id)
        elif action_id:
            raise InvalidArgument(f"unknown action {action_id[:40]!r} (known: {KILL_ACTION})")
        else:
            self._finder.open(match_id)

    @dbus_method()
    @replies_with_dbus_errors
    def Teardown(self) -> None:
        pass

    @dbus_method()
    @replies_with_dbus_errors
    def Config(self) -> CONFIG:
        return {}
