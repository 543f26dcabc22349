// The server's JSON API and sockets, as every page asks them (docs/web.md#the-api).

// `path`'s answer, parsed; with `body`, a change: a POST of JSON (what the server takes
// from its own pages only). An Error with the server's reason when it refuses.
export async function ask(path, body) {
  const change = body === undefined ? {} : {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  };
  const answer = await fetch(path, { credentials: "same-origin", ...change });
  const text = await answer.text();
  let parsed = {};
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = { error: text.trim() };
  }
  if (!answer.ok) throw new Error(parsed.error || answer.statusText);
  return parsed;
}

// The address of this server's WebSocket at `path` (wss: when the page came over https).
export function socketUrl(path) {
  const url = new URL(path, location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  return url;
}
