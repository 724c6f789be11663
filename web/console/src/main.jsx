// The console's shell: who the operator is (GET api/me), the token prompt when the server
// wants a credential, the navigation, and the page of the current path ({console}/<page>).
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, ApiError, consoleBase, getToken, setToken } from "./api.js";
import { pages } from "./pages.js";
import { pendingCount } from "./pin_diff.js";
import { PINS_EVENT } from "./pins.jsx";
import "./styles.css";

function pageFromLocation() {
  const rest = location.pathname.slice(consoleBase.pathname.length).replace(/\/.*$/, "");
  return pages.some((p) => p.id === rest) ? rest : pages[0].id;
}

function TokenPrompt({ refusal, onToken, checking, answered }) {
  const [token, setValue] = useState("");
  const forbidden = refusal?.status === 403;
  return (
    <main class="prompt" aria-labelledby="prompt-title">
      <h1 id="prompt-title">Toolport console</h1>
      {refusal && (
        <div class="alert" role="alert">
          <strong>{forbidden ? "Refused (403): this credential is not an operator's." : "A credential is needed (401)."}</strong>
          <p>{refusal.message}</p>
          {refusal.suggestion && <p>{refusal.suggestion}</p>}
        </div>
      )}
      <form
        data-answered={answered}
        onSubmit={(e) => {
          e.preventDefault();
          onToken(token.trim());
        }}
      >
        <label for="token">Bearer token (kept in this tab only)</label>
        <input id="token" type="password" autocomplete="off" value={token} onInput={(e) => setValue(e.currentTarget.value)} required />
        <button type="submit" disabled={checking}>
          {checking ? "Checking…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}

// How many tool definitions wait for an operator's approval (the Pins link's badge): asked
// every 10 s, and told by the Pins page whenever it knows.
function usePendingPins(signedIn) {
  const [count, setCount] = useState(0);
  useEffect(() => {
    if (!signedIn) return;
    const controller = new AbortController();
    const load = () =>
      api("pins", { signal: controller.signal })
        .then((answer) => setCount(pendingCount(answer)))
        .catch(() => {});
    load();
    const timer = setInterval(load, 10000);
    const told = (e) => setCount(e.detail);
    addEventListener(PINS_EVENT, told);
    return () => (controller.abort(), clearInterval(timer), removeEventListener(PINS_EVENT, told));
  }, [signedIn]);
  return count;
}

function App() {
  const [me, setMe] = useState(null);
  const [refusal, setRefusal] = useState(null);
  const [failure, setFailure] = useState(null);
  const [page, setPage] = useState(pageFromLocation);
  const [attempt, setAttempt] = useState(0);
  const [checking, setChecking] = useState(true);
  // How many answers to api/me came back (the token prompt shows it, for the browser tests).
  const [answered, setAnswered] = useState(0);
  const retry = () => setAttempt((a) => a + 1);
  const pendingPins = usePendingPins(Boolean(me));

  useEffect(() => {
    let live = true;
    setChecking(true);
    api("me")
      .then((answer) => live && (setMe(answer), setRefusal(null), setFailure(null)))
      .catch((e) => {
        if (!live) return;
        if (e instanceof ApiError && (e.status === 401 || e.status === 403)) setRefusal(e);
        else setFailure(e);
      })
      .finally(() => live && (setChecking(false), setAnswered((n) => n + 1)));
    return () => (live = false);
  }, [attempt]);

  useEffect(() => {
    const onPop = () => setPage(pageFromLocation());
    addEventListener("popstate", onPop);
    return () => removeEventListener("popstate", onPop);
  }, []);

  useEffect(() => {
    const current = pages.find((p) => p.id === page);
    document.title = `${current.title} · Toolport console`;
    document.getElementById("main")?.focus();
  }, [page, me]);

  if (refusal) return <TokenPrompt refusal={refusal} checking={checking} answered={answered} onToken={(t) => (setToken(t), retry())} />;
  if (failure)
    return (
      <main class="prompt">
        <h1>Toolport console</h1>
        <div class="alert" role="alert">
          The console's API did not answer: {failure.message}{" "}
          <button onClick={retry}>Try again</button>
        </div>
      </main>
    );
  if (!me) return <p class="loading" role="status">Loading…</p>;

  const current = pages.find((p) => p.id === page);
  const Page = current.component;
  const go = (id) => (e) => {
    e.preventDefault();
    history.pushState(null, "", new URL(id, consoleBase));
    setPage(id);
  };
  return (
    <div class="shell">
      <header class="top">
        <span class="brand">Toolport</span>
        <nav aria-label="Console pages">
          <ul>
            {pages.map((p) => (
              <li key={p.id}>
                <a href={new URL(p.id, consoleBase).pathname} aria-current={p.id === page ? "page" : undefined} onClick={go(p.id)}>
                  <span class="nav-title">{p.title}</span>
                  {p.id === "pins" && pendingPins > 0 && (
                    <span class="nav-count" data-pending={pendingPins}>
                      {" "}
                      {pendingPins}
                      <span class="sr-only"> pending</span>
                    </span>
                  )}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who">
          {me.principal || "operator"} <span class="muted">({me.auth === "none" ? "no auth, loopback" : me.auth})</span>
          {getToken() && (
            <button class="link" onClick={() => (setToken(""), setMe(null), retry())}>
              Sign out
            </button>
          )}
        </span>
      </header>
      <main id="main" tabIndex={-1} aria-labelledby="page-title">
        <h1 id="page-title">{current.title}</h1>
        <Page me={me} />
      </main>
    </div>
  );
}

render(<App />, document.getElementById("app"));
