// The overview: every pane with a picture of its screen, by window, kept up to date
// over a WebSocket (docs/web.md#the-overview): the list when muxd says it changed, a
// screen when it did, at most five times a second. Everything shown is set as text
// (textContent) or as colours through the CSSOM, never as markup: titles,
// directories and screens come from programs.
import { drawScreen, element, screenText } from "/static/screen.js";

const main = document.getElementById("panes");
const filter = document.getElementById("filter");
const state = document.getElementById("state");
let panes = [];
const screens = new Map(); // pane id -> rows of runs
const cards = new Map(); // pane id -> {card, head, title, status, pre}
let retries = 0;

function matches(pane, words) {
  const text = [pane.title, pane.program, pane.cwd, screenText(screens.get(pane.id))]
    .join("\n")
    .toLowerCase();
  return words.every((word) => text.includes(word));
}

function cardOf(pane) {
  let shown = cards.get(pane.id);
  if (!shown) {
    const card = element("article", "pane");
    card.dataset.pane = pane.id;
    const head = element("header");
    const title = element("span", "title");
    const open = element("a", "open", "attach");
    open.href = `/pane/${encodeURIComponent(pane.id)}`;
    const status = element("span", "state");
    const start = element("button", "start", "start");
    start.title = "start this pane, held since the restore";
    start.addEventListener("click", () => startPane(pane.id, start));
    head.append(title, open, start, status);
    const pre = element("pre", "screen");
    card.append(head, pre);
    shown = { card, title, status, pre, start };
    cards.set(pane.id, shown);
    drawScreen(pre, screens.get(pane.id) || []);
  }
  shown.title.textContent = `${pane.id}: ${pane.title || pane.program} · ${pane.cwd}`;
  shown.status.textContent = pane.state;
  shown.status.className = `state ${pane.state.split("(")[0]}`;
  shown.start.hidden = pane.state !== "held";
  return shown.card;
}

function render() {
  const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
  const windows = new Map();
  for (const pane of panes.filter((p) => matches(p, words))) {
    if (!windows.has(pane.window)) windows.set(pane.window, []);
    windows.get(pane.window).push(pane);
  }
  const sections = [];
  for (const [window, members] of windows) {
    const section = element("section", "window");
    section.append(element("h2", "", `window ${window}`));
    for (const pane of members) section.append(cardOf(pane));
    sections.push(section);
  }
  main.replaceChildren(...sections);
}

function update(message) {
  state.textContent = message.error ? `${message.error}; trying again` : "";
  if (message.panes) {
    panes = message.panes;
    const listed = new Set(panes.map((pane) => pane.id));
    for (const id of [...cards.keys()]) if (!listed.has(id)) cards.delete(id);
    for (const id of [...screens.keys()]) if (!listed.has(id)) screens.delete(id);
  }
  for (const [id, rows] of Object.entries(message.screens)) {
    screens.set(Number(id), rows);
    const shown = cards.get(Number(id));
    if (shown) drawScreen(shown.pre, rows);
  }
  if (message.panes || (filter.value && Object.keys(message.screens).length)) render();
}

async function startPane(id, button) {
  button.disabled = true;
  try {
    const answer = await fetch(`/api/panes/${id}/start`, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: "{}",
    });
    if (!answer.ok) state.textContent = (await answer.json()).error || answer.statusText;
  } catch (error) {
    state.textContent = error.message;
  } finally {
    button.disabled = false;
  }
}

function connect() {
  const url = new URL("/ws/overview", location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  const socket = new WebSocket(url);
  socket.onmessage = (event) => {
    retries = 0;
    update(JSON.parse(event.data));
  };
  socket.onclose = () => {
    state.textContent = "connection lost: trying again";
    setTimeout(connect, Math.min(5000, 250 * 2 ** retries++));
  };
}

filter.addEventListener("input", render);
connect();
