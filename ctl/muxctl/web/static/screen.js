// Drawing a pane's screen (rows of runs, muxctl.web.thumbnails) into a <pre>, shared by
// the overview and the snapshots page: text as text nodes, colours through the CSSOM
// (the CSP allows no style markup), never HTML.
const DEFAULT_FG = "#c5c8c6";
const DEFAULT_BG = "#000000";
const FLAG_CLASSES = { b: "bold", f: "faint", i: "italic", u: "underline", s: "struck" };

export function element(tag, className, text) {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (text !== undefined) made.textContent = text;
  return made;
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

export function drawScreen(pre, rows) {
  const parts = [];
  rows.forEach((row, index) => {
    if (index) parts.push(document.createTextNode("\n"));
    for (const run of row) parts.push(drawRun(run));
  });
  pre.replaceChildren(...parts);
}

export function screenText(rows) {
  return (rows || []).map((row) => row.map((run) => run[0]).join("")).join("\n");
}
