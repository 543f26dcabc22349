// The overview: every pane with its screen, by window, refreshed every second.
// Everything shown is set as text (textContent), never as markup: titles, directories
// and screens come from programs.
const main = document.getElementById("panes");
const filter = document.getElementById("filter");
const state = document.getElementById("state");
let panes = [];

function matches(pane, words) {
  const text = [pane.title, pane.program, pane.cwd, pane.screen.join("\n")].join("\n").toLowerCase();
  return words.every((word) => text.includes(word));
}

function element(tag, className, text) {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (text !== undefined) made.textContent = text;
  return made;
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
    for (const pane of members) {
      const card = element("article", "pane");
      card.dataset.pane = pane.id;
      const head = element("header", "", `${pane.id}: ${pane.title || pane.program} · ${pane.cwd}`);
      const open = element("a", "open", "attach");
      open.href = `/pane/${encodeURIComponent(pane.id)}`;
      head.append(open, element("span", `state ${pane.state.split("(")[0]}`, pane.state));
      card.append(head, element("pre", "screen", pane.screen.join("\n")));
      section.append(card);
    }
    sections.push(section);
  }
  main.replaceChildren(...sections);
}

async function refresh() {
  try {
    const answer = await fetch("/api/panes", { credentials: "same-origin" });
    const body = await answer.json();
    if (!answer.ok) throw new Error(body.error || answer.statusText);
    panes = body.panes;
    state.textContent = "";
    render();
  } catch (error) {
    state.textContent = `${error.message}; trying again`;
  }
  setTimeout(refresh, 1000);
}

filter.addEventListener("input", render);
refresh();
