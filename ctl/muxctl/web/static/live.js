// The overview's socket (/ws/overview), shared by the pages that draw live screens:
// each update (JSON: the list when it changed, the screens that did, or an error)
// goes to `onUpdate`; a lost connection is said in `state` and made again, a quarter
// of a second later and then less often (at most every 5 s).
import { socketUrl } from "/static/api.js";

export function followOverview(onUpdate, state) {
  let retries = 0;
  function connect() {
    const socket = new WebSocket(socketUrl("/ws/overview"));
    socket.onmessage = (event) => {
      retries = 0;
      const message = JSON.parse(event.data);
      state.textContent = message.error ? `${message.error}; trying again` : "";
      onUpdate(message);
    };
    socket.onclose = () => {
      state.textContent = "connection lost: trying again";
      setTimeout(connect, Math.min(5000, 250 * 2 ** retries++));
    };
  }
  connect();
}
