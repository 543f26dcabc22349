// The overview: every pane with a picture of its screen, by window, kept up to date
// over a WebSocket (docs/web.md#the-overview): the list when muxd says it changed, a
// screen when it did, at most every 180 ms (a little over five times a second). Everything shown is set as text
// (textContent) or as colours through the CSSOM, never as markup: titles,
// directories and screens come from programs.
import { ask } from "/static/api.js";
import { followOverview } from "/static/live.js";
import { drawScreen, element, screenText } from "/static/screen.js";

const main = document.getElementById("panes");
const filter = document.getElementById("filter");
const state = document.getElementById("state");
let panes = [];
const screens = new Map(); // pane key ("ID", or "HOST:ID" for a host's) -> rows of runs
const cards = new Map(); // pane key -> {card, title, status, pre, start, open}

function matches(pane, words) {
  const text = [pane.host, pane.title, pane.program, pane.cwd, pane.notice, screenText(screens.get(pane.key))]
    .join("\n")
    .toLowerCase();
  return words.every((word) => text.includes(word));
}

function cardOf(pane) {
  let shown = cards.get(pane.key);
  if (!shown) {
    const card = element("article", "pane");
    card.dataset.pane = pane.id;
    card.dataset.host = pane.host;
    const head = element("header");
    const title = element("span", "title");
    const open = element("a", "open", "attach");
    open.href = `/pane/${encodeURIComponent(pane.id)}`;
    open.hidden = Boolean(pane.host); // (a host's pane: muxctl --host HOST attach ID)
    const status = element("span", "state");
    const notice = element("p", "notice");
    notice.setAttribute("role", "status");
    const start = element("button", "start", "start");
    start.title = "start this pane, held since the restore";
    start.addEventListener("click", () => startPane(pane.id, start));
    head.append(title, open, start, status);
    const pre = element("pre", "screen");
    card.append(head, notice, pre);
    shown = { card, title, status, pre, start, notice };
    cards.set(pane.key, shown);
    drawScreen(pre, screens.get(pane.key) || []);
  }
  const where = pane.host ? `${pane.host}: ` : "";
  shown.title.textContent = `${where}${pane.id}: ${pane.title || pane.program} · ${pane.cwd}`;
  shown.status.textContent = pane.state;
  shown.status.className = `state ${pane.state.split("(")[0]}`;
  shown.start.hidden = pane.state !== "held" || Boolean(pane.host);
  shown.notice.textContent = pane.notice ? `🔔 ${pane.notice}` : "";
  shown.notice.hidden = !pane.notice;
  shown.card.classList.toggle("noticed", Boolean(pane.notice));
  return shown.card;
}

function render() {
  const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
  const windows = new Map();
  for (const pane of panes.filter((p) => matches(p, words))) {
    const window = pane.host ? `${pane.host}: window ${pane.window}` : `window ${pane.window}`;
    if (!windows.has(window)) windows.set(window, []);
    windows.get(window).push(pane);
  }
  const sections = [];
  for (const [window, members] of windows) {
    const section = element("section", "window");
    section.append(element("h2", "", window));
    for (const pane of members) section.append(cardOf(pane));
    sections.push(section);
  }
  main.replaceChildren(...sections);
}

function update(message) {
  if (message.panes) {
    panes = message.panes;
    const listed = new Set(panes.map((pane) => pane.key));
    for (const key of [...cards.keys()]) if (!listed.has(key)) cards.delete(key);
    for (const key of [...screens.keys()]) if (!listed.has(key)) screens.delete(key);
  }
  for (const [key, rows] of Object.entries(message.screens)) {
    screens.set(key, rows);
    const shown = cards.get(key);
    if (shown) drawScreen(shown.pre, rows);
  }
  if (message.panes || (filter.value && Object.keys(message.screens).length)) render();
}

async function startPane(id, button) {
  button.disabled = true;
  try {
    await ask(`/api/panes/${id}/start`, {});
  } catch (error) {
    state.textContent = error.message;
  } finally {
    button.disabled = false;
  }
}

filter.addEventListener("input", render);
followOverview(update, state);
