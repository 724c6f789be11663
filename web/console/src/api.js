// The console's JSON API, reached relative to the page: the script is {console}/assets/app.js,
// so the API is {console}/api/. A token the operator entered is kept in sessionStorage (gone
// with the tab) and sent as a bearer credential; without one, nothing is sent (loopback, no auth).

export const consoleBase = new URL("../", import.meta.url);
const apiBase = new URL("api/", consoleBase);
const TOKEN_KEY = "toolport.console.token";

export function getToken() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}
export function setToken(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

// An answer that was not 2xx, with the API's {"error":{code,message,suggestion}} when it sent one.
export class ApiError extends Error {
  constructor(status, error) {
    super(error?.message || `HTTP ${status}`);
    this.status = status;
    this.code = error?.code || `http_${status}`;
    this.suggestion = error?.suggestion || "";
  }
}

function headers(extra) {
  const h = { Accept: "application/json", ...extra };
  const token = getToken();
  if (token) h.Authorization = `Bearer ${token}`;
  return h;
}

async function failure(response) {
  let error = null;
  try {
    error = (await response.json()).error;
  } catch {
    // not JSON: the status says it
  }
  return new ApiError(response.status, error);
}

export function apiUrl(path) {
  return new URL(path, apiBase).toString();
}

// GET (or another method with a JSON body) and the JSON answer; 202/204 give null.
export async function api(path, { method = "GET", body, signal } = {}) {
  const init = { method, signal, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(apiUrl(path), init);
  if (!response.ok) throw await failure(response);
  if (response.status === 202 || response.status === 204) return null;
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

// An SSE answer read with fetch() and a stream reader (EventSource cannot send Authorization):
// onEvent(name, data) for every event, data parsed as JSON. Resolves when the stream ends;
// rejects with ApiError when refused. Aborting `signal` ends it.
export async function stream(path, { method = "GET", body, signal, onEvent, onOpen }) {
  const init = {
    method,
    signal,
    headers: headers({ Accept: "text/event-stream", ...(body === undefined ? {} : { "Content-Type": "application/json" }) }),
  };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(apiUrl(path), init);
  if (!response.ok) throw await failure(response);
  onOpen?.();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let event = "message";
  let data = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let newline;
    while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
      if (line === "") {
        if (data.length) {
          const text = data.join("\n");
          let parsed = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // a non-JSON data field is handed over as text
          }
          onEvent(event, parsed);
        }
        event = "message";
        data = [];
      } else if (line.startsWith(":")) {
        // a comment (keep-alive)
      } else {
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const val = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") event = val;
        else if (field === "data") data.push(val);
      }
    }
  }
}

// Keeps a GET stream open while `signal` is not aborted, reconnecting after a failure or an
// end (with a growing pause); onState("live"|"reconnecting"|error) says where it is.
export async function liveStream(path, { signal, onEvent, onState }) {
  let pause = 500;
  while (!signal.aborted) {
    try {
      await stream(path, { signal, onEvent, onOpen: () => ((pause = 500), onState("live")) });
      if (signal.aborted) return;
      onState("reconnecting");
    } catch (e) {
      if (signal.aborted) return;
      if (e instanceof ApiError && (e.status === 401 || e.status === 403 || e.status === 404)) {
        onState(e);
        return;
      }
      onState("reconnecting");
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(pause * 2, 8000);
  }
}
