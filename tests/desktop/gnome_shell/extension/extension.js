/* mux's GNOME Shell check (tests/desktop/test_gnome_shell.py), GNOME Shell 43.
 *
 * Once the shell has started: open the overview, type MUX_CHECK_QUERY into its
 * search entry, then watch the search results view until a result of the provider
 * whose desktop id is MUX_CHECK_DESKTOP_ID is shown, and write what is shown as
 * JSON to MUX_CHECK_REPORT (rewritten on every look, atomically).
 *
 * GNOME 43 internals used (js/ui/search.js, overviewControls.js, searchController.js):
 * Main.overview._overview._controls._searchController._searchResults is the
 * SearchResultsView; its _providers each have .id (the desktop id), .isRemoteProvider
 * and .display, a ListSearchResults whose _content holds the ListSearchResult actors
 * shown, each with .metaInfo (the provider's meta: id, name, description).
 */
/* exported init */
const { GLib } = imports.gi;
const Main = imports.ui.main;

const LOOK_EVERY_MS = 100;
const GIVE_UP_AFTER_MS = 60000;

function writeReport(path, report) {
    // g_file_set_contents writes a temp file and renames it: readers see whole reports.
    GLib.file_set_contents(path, `${JSON.stringify(report)}\n`);
}

class Extension {
    constructor() {
        this._timeoutId = 0;
        this._startupId = 0;
    }

    enable() {
        this._report = GLib.getenv('MUX_CHECK_REPORT');
        this._query = GLib.getenv('MUX_CHECK_QUERY');
        this._desktopId = GLib.getenv('MUX_CHECK_DESKTOP_ID');
        if (!this._report || !this._query || !this._desktopId) {
            log('mux-search-check: MUX_CHECK_REPORT, MUX_CHECK_QUERY or MUX_CHECK_DESKTOP_ID unset');
            return;
        }
        if (Main.layoutManager._startingUp) {
            this._startupId = Main.layoutManager.connect('startup-complete', () => {
                Main.layoutManager.disconnect(this._startupId);
                this._startupId = 0;
                this._search();
            });
        } else {
            this._search();
        }
    }

    disable() {
        if (this._startupId) {
            Main.layoutManager.disconnect(this._startupId);
            this._startupId = 0;
        }
        if (this._timeoutId) {
            GLib.source_remove(this._timeoutId);
            this._timeoutId = 0;
        }
    }

    _search() {
        log(`mux-search-check: searching the overview for ${JSON.stringify(this._query)}`);
        Main.overview.show();
        Main.overview.searchEntry.set_text(this._query);
        const started = GLib.get_monotonic_time();
        this._timeoutId = GLib.timeout_add(GLib.PRIORITY_DEFAULT, LOOK_EVERY_MS, () => {
            let done;
            try {
                done = this._look();
            } catch (e) {
                writeReport(this._report, { error: `${e}\n${e.stack}` });
                done = true;
            }
            if (!done && GLib.get_monotonic_time() - started > GIVE_UP_AFTER_MS * 1000) {
                log('mux-search-check: gave up');
                done = true;
            }
            if (done)
                this._timeoutId = 0;
            return done ? GLib.SOURCE_REMOVE : GLib.SOURCE_CONTINUE;
        });
    }

    _look() {
        const view = Main.overview._overview._controls._searchController._searchResults;
        const providers = view._providers.map(provider => {
            const display = provider.display;
            const shown = display && display._content
                ? display._content.get_children().map(actor => ({
                    id: actor.metaInfo.id,
                    name: actor.metaInfo.name,
                    description: actor.metaInfo.description ?? '',
                    visible: actor.visible,
                }))
                : [];
            return {
                id: provider.id,
                remote: Boolean(provider.isRemoteProvider),
                visible: Boolean(display && display.visible),
                results: shown,
            };
        });
        const mux = providers.find(p => p.id === this._desktopId);
        const found = Boolean(mux && mux.visible && mux.results.length > 0);
        const report = {
            overview_visible: Main.overview.visible,
            search_text: Main.overview.searchEntry.get_text(),
            terms: view.terms,
            search_in_progress: view.searchInProgress,
            providers,
            found,
        };
        writeReport(this._report, report);
        if (found) {
            for (const result of mux.results)
                log(`mux-search-check: shown result ${JSON.stringify(result.name)} from ${mux.id}`);
        }
        return found;
    }
}

function init() {
    return new Extension();
}
