// Every window drawn to scale (docs/web.md#the-windows-page): its split tree as nested
// boxes sized by the ratios, each region the pane's live screen (from the overview's
// socket), the focused pane marked. Text as text, colours through the CSSOM.
import { ask } from "/static/api.js";
import { followOverview } from "/static/live.js";
import { drawScreen, element } from "/static/screen.js";

const main = document.getElementById("windows");
const state = document.getElementById("state");
const screens = new Map(); // pane id -> rows of runs
const regions = new Map(); // pane id -> its <pre>
let panes = new Map(); // pane id -> the overview's entry

function region(paneId, focused) {
  const pane = panes.get(paneId);
  const box = element("article", focused ? "region focused" : "region");
  box.dataset.pane = paneId;
  const name = pane ? `${paneId}: ${pane.title || pane.program}` : `${paneId}`;
  const head = element("header", "", name);
  const open = element("a", "open", "attach");
  open.href = `/pane/${encodeURIComponent(paneId)}`;
  head.append(open);
  const pre = element("pre", "screen");
  drawScreen(pre, screens.get(paneId) || []);
  regions.set(paneId, pre);
  box.append(head, pre);
  return box;
}

function node(tree, focused) {
  if (tree.pane !== undefined) return region(tree.pane, tree.pane === focused);
  const split = element("div", `split ${tree.split}`);
  tree.children.forEach((child, index) => {
    const part = node(child, focused);
    part.style.flex = `${tree.ratios[index]} 1 0`;
    split.append(part);
  });
  return split;
}

async function draw() {
  let windows;
  try {
    ({ windows } = await ask("/api/windows"));
  } catch (error) {
    state.textContent = error.message;
    return;
  }
  regions.clear();
  const sections = windows.map((window) => {
    const section = element("section", "window-layout");
    section.dataset.window = window.id;
    section.append(element("h2", "", `window ${window.id}${window.title ? `: ${window.title}` : ""}`));
    const frame = element("div", "frame");
    frame.append(node(window.layout, window.focused_pane));
    section.append(frame);
    return section;
  });
  main.replaceChildren(...sections);
  if (!windows.length) main.append(element("p", "", "no windows"));
}

function update(message) {
  for (const [key, rows] of Object.entries(message.screens)) {
    if (!/^[0-9]+$/.test(key)) continue; // (a host's pane: its windows are not drawn here)
    screens.set(Number(key), rows);
    const pre = regions.get(Number(key));
    if (pre) drawScreen(pre, rows);
  }
  if (message.panes) {
    panes = new Map(message.panes.filter((pane) => !pane.host).map((pane) => [pane.id, pane]));
    draw(); // (a new list may mean a split, a pane gone, a window made)
  }
}

followOverview(update, state);
