// The hosts this mux drives over ssh (docs/web.md#the-hosts-page): their link's state
// and last error, read again every 2 seconds. Text as text.
import { ask } from "/static/api.js";
import { element } from "/static/screen.js";

const main = document.getElementById("hosts");
const state = document.getElementById("state");
const EVERY = 2000;

async function refresh() {
  try {
    const body = await ask("/api/hosts");
    state.textContent = "";
    if (!body.hosts.length) {
      main.replaceChildren(element("p", "", "no hosts: muxctl hosts add NAME DESTINATION adds one"));
    } else {
      const table = element("table", "hosts");
      const head = element("tr");
      for (const title of ["host", "destination", "link", "last error"]) head.append(element("th", "", title));
      table.append(head);
      for (const host of body.hosts) {
        const row = element("tr");
        row.dataset.host = host.name;
        row.append(
          element("td", "", host.name),
          element("td", "", host.destination),
          element("td", `link ${host.state}`, host.state),
          element("td", "error", host.last_error),
        );
        table.append(row);
      }
      main.replaceChildren(table);
    }
  } catch (error) {
    state.textContent = `${error.message}; trying again`;
  }
  setTimeout(refresh, EVERY);
}

refresh();
