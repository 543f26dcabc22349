// A pane attached in the browser: xterm.js draws it, a WebSocket carries it
// (docs/web.md#the-pane-page). Binary frames are the pane's bytes both ways; text
// frames are JSON: sizes and flow control from here, attached/repaint/reconnecting/
// ended from the server. The socket comes back after a network blip or a frozen tab,
// and muxd repaints the screen then.
import { Terminal } from "/static/vendor/xterm.mjs";
import { FitAddon } from "/static/vendor/addon-fit.mjs";
import { socketUrl } from "/static/api.js";

const pane = Number(location.pathname.split("/").pop());
const title = document.getElementById("title");
const state = document.getElementById("state");
const readOnlyBox = document.getElementById("read-only");
// Flow control (xtermjs.org's guide): past HIGH bytes not yet drawn the server is asked
// to pause (muxd then sends this page the latest screen when it catches up), below LOW
// to go on.
const HIGH = 512 * 1024;
const LOW = 64 * 1024;
const RESIZE_DELAY = 50; // ms: a window dragged larger sends one size, not fifty
const MAX_HELD = 64 * 1024; // keys typed while the socket is down, sent once it is back

const term = new Terminal({ scrollback: 5000, cursorBlink: true, allowProposedApi: false });
const fit = new FitAddon();
term.loadAddon(fit);
term.open(document.getElementById("terminal"));
fit.fit();
title.textContent = `pane ${pane}`;
document.title = `mux: pane ${pane}`;

const encoder = new TextEncoder();
let socket = null;
let ended = false;
let retries = 0;
let undrawn = 0;
let paused = false;
let resizeTimer = 0;
let held = [];
let heldBytes = 0;

function say(text) {
  state.textContent = text;
}

function send(data) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(data);
}

function type(bytes) {
  if (readOnlyBox.checked) return;
  if (socket && socket.readyState === WebSocket.OPEN) {
    socket.send(bytes);
  } else if (heldBytes + bytes.length <= MAX_HELD) {
    held.push(bytes);
    heldBytes += bytes.length;
  }
}

function sendSize() {
  send(JSON.stringify({ type: "resize", rows: term.rows, cols: term.cols }));
}

function draw(bytes) {
  undrawn += bytes.length;
  term.write(bytes, () => {
    undrawn -= bytes.length;
    if (paused && undrawn < LOW) {
      paused = false;
      send(JSON.stringify({ type: "resume" }));
    }
  });
  if (!paused && undrawn > HIGH) {
    paused = true;
    send(JSON.stringify({ type: "pause" }));
  }
}

function control(message) {
  if (message.type === "attached") {
    retries = 0;
    say(message.read_only ? "watching (read-only)" : "attached");
    const keys = held;
    held = [];
    heldBytes = 0;
    for (const bytes of keys) type(bytes);
  } else if (message.type === "repaint") {
    term.reset();
  } else if (message.type === "reconnecting") {
    say("mux is upgrading: reattaching");
  } else if (message.type === "ended") {
    ended = true;
    say(String(message.why));
    term.options.disableStdin = true;
  }
}

function connect() {
  const url = socketUrl(`/ws/pane/${pane}`);
  url.searchParams.set("rows", term.rows);
  url.searchParams.set("cols", term.cols);
  if (readOnlyBox.checked) url.searchParams.set("read_only", "1");
  const opened = new WebSocket(url);
  opened.binaryType = "arraybuffer";
  opened.onmessage = (event) => {
    if (opened !== socket) return;
    if (typeof event.data === "string") control(JSON.parse(event.data));
    else draw(new Uint8Array(event.data));
  };
  opened.onclose = () => {
    if (opened !== socket || ended) return;
    const wait = Math.min(5000, 250 * 2 ** retries++);
    say("connection lost: trying again");
    setTimeout(connect, wait);
  };
  undrawn = 0;
  paused = false;
  socket = opened;
  term.options.disableStdin = readOnlyBox.checked;
}

term.onData((data) => type(encoder.encode(data)));
term.onBinary((data) => type(Uint8Array.from(data, (c) => c.charCodeAt(0))));
term.onTitleChange((text) => {
  title.textContent = text || `pane ${pane}`; // (textContent: a title is the program's text)
  document.title = `mux: ${title.textContent}`;
});
term.onResize(() => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(sendSize, RESIZE_DELAY);
});
new ResizeObserver(() => fit.fit()).observe(document.getElementById("terminal"));
readOnlyBox.addEventListener("change", () => {
  // A client is read-only from its HELLO on: a new connection says the other.
  ended = false;
  const old = socket;
  connect();
  if (old) old.close();
  term.focus();
});
// A tab the browser froze may come back with a socket the server let go.
document.addEventListener("visibilitychange", () => {
  if (!document.hidden && !ended && socket && socket.readyState > WebSocket.OPEN) connect();
});
connect();
term.focus();
