// The overview: every pane with a picture of its screen, by window, kept up to date
// over a WebSocket (docs/web.md#the-overview): the list when muxd says it changed, a
// screen when it did, at most five times a second. Everything shown is set as text
// (textContent) or as colours through the CSSOM, never as markup: titles,
// directories and screens come from programs.
const main = document.getElementById("panes");
const filter = document.getElementById("filter");
const state = document.getElementById("state");
const DEFAULT_FG = "#c5c8c6";
const DEFAULT_BG = "#000000";
const FLAG_CLASSES = { b: "bold", f: "faint", i: "italic", u: "underline", s: "struck" };

let panes = [];
const screens = new Map(); // pane id -> rows of runs
const cards = new Map(); // pane id -> {card, head, title, status, pre}
let retries = 0;

function element(tag, className, text) {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (text !== undefined) made.textContent = text;
  return made;
}

function screenText(id) {
  return (screens.get(id) || []).map((row) => row.map((run) => run[0]).join("")).join("\n");
}

function matches(pane, words) {
  const text = [pane.title, pane.program, pane.cwd, screenText(pane.id)].join("\n").toLowerCase();
  return words.every((word) => text.includes(word));
}

function drawRun(run) {
  if (run.length === 1) return document.createTextNode(run[0]);
  const [text, fg, bg, flags] = run;
  const span = element("span", "", text);
  let [front, back] = [fg, bg];
  if (flags.includes("r")) [front, back] = [bg || DEFAULT_BG, fg || DEFAULT_FG];
  if (front) span.style.color = front;
  if (back) span.style.backgroundColor = back;
  for (const flag of flags) if (FLAG_CLASSES[flag]) span.classList.add(FLAG_CLASSES[flag]);
  return span;
}

function drawScreen(pre, rows) {
  const parts = [];
  rows.forEach((row, index) => {
    if (index) parts.push(document.createTextNode("\n"));
    for (const run of row) parts.push(drawRun(run));
  });
  pre.replaceChildren(...parts);
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
    head.append(title, open, status);
    const pre = element("pre", "screen");
    card.append(head, pre);
    shown = { card, title, status, pre };
    cards.set(pane.id, shown);
    drawScreen(pre, screens.get(pane.id) || []);
  }
  shown.title.textContent = `${pane.id}: ${pane.title || pane.program} · ${pane.cwd}`;
  shown.status.textContent = pane.state;
  shown.status.className = `state ${pane.state.split("(")[0]}`;
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
