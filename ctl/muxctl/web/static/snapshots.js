// The history of snapshots (docs/web.md#the-snapshots-page): pick one, see what a
// restore would start (the dry run, each pane with a picture of its saved contents),
// choose panes, restore them beside what runs. Text is set as text, never markup.
import { ask } from "/static/api.js";
import { drawScreen, element } from "/static/screen.js";

const history = document.getElementById("history");
const chosen = document.getElementById("chosen");
const state = document.getElementById("state");

async function listHistory() {
  try {
    const { snapshots } = await ask("/api/snapshots");
    state.textContent = "";
    if (!snapshots.length) {
      history.replaceChildren(element("p", "", "no snapshots in the history yet"));
      return;
    }
    const list = element("ol", "history");
    for (const snapshot of snapshots) {
      const item = element("li");
      const button = element("button", "snapshot", `${snapshot.generation} · ${snapshot.local_time}`);
      button.dataset.generation = snapshot.generation;
      button.addEventListener("click", () => show(snapshot));
      const about = `${snapshot.panes} panes, ${snapshot.windows} windows: ${snapshot.summary}`;
      item.append(button, element("p", "summary", about));
      list.append(item);
    }
    history.replaceChildren(list);
  } catch (error) {
    state.textContent = error.message;
  }
}

async function show(snapshot) {
  chosen.replaceChildren(element("p", "", `reading snapshot ${snapshot.generation}…`));
  let panes;
  try {
    ({ panes } = await ask(`/api/snapshots/${snapshot.generation}`));
  } catch (error) {
    chosen.replaceChildren(element("p", "error", error.message));
    return;
  }
  const heading = element("h2", "", `snapshot ${snapshot.generation}, ${snapshot.local_time}`);
  if (!panes.length) {
    chosen.replaceChildren(heading, element("p", "", "every pane of it runs already: a restore would start nothing"));
    return;
  }
  const windows = new Map();
  for (const pane of panes) {
    if (!windows.has(pane.snapshot_window)) windows.set(pane.snapshot_window, []);
    windows.get(pane.snapshot_window).push(pane);
  }
  const boxes = [];
  const sections = [];
  for (const [window, members] of windows) {
    const section = element("section", "window");
    section.append(element("h3", "", `window ${window}`));
    for (const pane of members) {
      const card = element("article", "pane");
      card.dataset.snapshotPane = pane.snapshot_pane;
      const label = element("label");
      const box = element("input");
      box.type = "checkbox";
      box.checked = true;
      box.value = pane.snapshot_pane;
      boxes.push(box);
      const command = pane.argv.join(" ");
      label.append(box, element("span", "", ` ${pane.snapshot_pane}: ${pane.title || command} · ${pane.cwd}`));
      const head = element("header");
      head.append(label);
      const pre = element("pre", "screen");
      drawScreen(pre, pane.screen);
      card.append(head, element("p", "command", command), pre);
      section.append(card);
    }
    sections.push(section);
  }
  const button = element("button", "restore", "restore the chosen panes");
  const outcome = element("p", "outcome");
  outcome.setAttribute("role", "status");
  button.addEventListener("click", async () => {
    const picked = boxes.filter((box) => box.checked).map((box) => Number(box.value));
    if (!picked.length) {
      outcome.textContent = "choose at least one pane";
      return;
    }
    button.disabled = true;
    try {
      const { started } = await ask(`/api/snapshots/${snapshot.generation}/restore`, { panes: picked });
      const ids = started.map((pane) => pane.pane).join(", ");
      outcome.textContent = started.length ? `started ${started.length} panes: ${ids}` : "nothing started: they run already";
      listHistory();
    } catch (error) {
      outcome.textContent = error.message;
    } finally {
      button.disabled = false;
    }
  });
  const intro = element("p", "", "a restore starts these beside what runs, under new ids; what runs now is saved first, so it can be undone");
  chosen.replaceChildren(heading, intro, ...sections, button, outcome);
}

listHistory();
