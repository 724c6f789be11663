// Configuration: the effective configuration (secrets already redacted by the server), what
// `config check` says of it, and the reload with its outcome per source.
import { useEffect, useState } from "preact/hooks";
import { api } from "./api.js";
import { json } from "./format.js";

function Reload() {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState(null);
  const [error, setError] = useState(null);
  const run = async () => {
    setBusy(true);
    setError(null);
    setOutcome(null);
    try {
      setOutcome(await api("reload", { method: "POST" }));
    } catch (e) {
      setError(e);
    }
    setBusy(false);
  };
  const list = (names) => (names?.length ? names.join(", ") : "–");
  return (
    <section class="card" aria-labelledby="reload-title">
      <h2 id="reload-title">Reload</h2>
      <p class="muted">Fetches the definitions of the REST catalogs, OpenAPI documents and upstreams again, and says which tools each added, changed or removed.</p>
      <button onClick={run} disabled={busy}>{busy ? "Reloading…" : "Reload now"}</button>
      {error && <div class="alert" role="alert">{error.message} {error.suggestion}</div>}
      {outcome && (
        <div class="reload-outcome" role="status">
          <p>
            Reload <strong class={outcome.status === "failed" ? "bad-text" : "ok-text"}>{outcome.status}</strong>
          </p>
          <table>
            <thead>
              <tr><th scope="col">Source</th><th scope="col">Added</th><th scope="col">Changed</th><th scope="col">Removed</th><th scope="col">Error</th></tr>
            </thead>
            <tbody>
              {outcome.sources.map((s) => (
                <tr key={s.name} data-source={s.name}>
                  <th scope="row">{s.name}</th>
                  <td class="added">{list(s.added)}</td>
                  <td class="changed">{list(s.changed)}</td>
                  <td class="removed">{list(s.removed)}</td>
                  <td class={s.error ? "bad-text" : ""}>{s.error || "–"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

// Every key as it takes effect here, with where its value came from; filtered by a text,
// defaults hidden unless asked for.
function EffectiveKeys({ keys }) {
  const [query, setQuery] = useState("");
  const [defaults, setDefaults] = useState(false);
  const q = query.trim().toLowerCase();
  const shown = keys.filter(
    (k) => (defaults || k.from !== "default") && (!q || k.path.toLowerCase().includes(q) || json(k.value).toLowerCase().includes(q)),
  );
  return (
    <section class="card" aria-labelledby="keys-title">
      <h2 id="keys-title">Every key</h2>
      <p class="muted">Each key as it takes effect: set in the file, by an environment variable over it, or its default. Secrets are shown as ***.</p>
      <div class="filters">
        <div>
          <label for="keys-filter">Filter</label>
          <input id="keys-filter" type="search" value={query} onInput={(e) => setQuery(e.currentTarget.value)} placeholder="e.g. http. or budget" />
        </div>
        <div>
          <label>
            <input id="keys-defaults" type="checkbox" checked={defaults} onChange={(e) => setDefaults(e.currentTarget.checked)} /> Show defaults
          </label>
        </div>
      </div>
      <table class="effective-keys">
        <thead>
          <tr><th scope="col">Key</th><th scope="col">Value</th><th scope="col">From</th></tr>
        </thead>
        <tbody>
          {shown.map((k) => (
            <tr key={k.path} data-key={k.path}>
              <th scope="row"><code>{k.path}</code></th>
              <td><code>{typeof k.value === "string" ? k.value : json(k.value)}</code></td>
              <td class={k.from === "default" ? "muted" : ""}>{k.from}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted" role="status">{shown.length} of {keys.length} keys</p>
    </section>
  );
}

export function Configuration() {
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    const controller = new AbortController();
    api("config", { signal: controller.signal })
      .then(setData)
      .catch((e) => controller.signal.aborted || setError(e));
    return () => controller.abort();
  }, []);
  return (
    <>
      <Reload />
      {error && <div class="alert" role="alert">{error.message} {error.suggestion}</div>}
      {data && (
        <>
          <section class="card" aria-labelledby="check-title">
            <h2 id="check-title">Check</h2>
            {data.check.ok && data.check.findings.length === 0 && <p class="ok-text">No findings: the configuration is valid.</p>}
            {!data.check.ok && <p class="bad-text">The configuration has errors.</p>}
            {data.check.findings.length > 0 && (
              <table>
                <thead>
                  <tr><th scope="col">Level</th><th scope="col">Where</th><th scope="col">Finding</th></tr>
                </thead>
                <tbody>
                  {data.check.findings.map((f, i) => (
                    <tr key={i}>
                      <td><span class={`badge ${f.level === "error" ? "state-down" : "state-degraded"}`}>{f.level}</span></td>
                      <td><code>{f.path}</code></td>
                      <td>{f.message}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
          {data.effective.keys && <EffectiveKeys keys={data.effective.keys} />}
          <section class="card" aria-labelledby="effective-title">
            <h2 id="effective-title">The file, and what it serves</h2>
            <p class="muted">The file as written now (it may have changed since the start or the last reload), and what this process serves. Secrets are shown as ***.</p>
            <pre tabIndex={0} aria-label="The file and what it serves, as JSON">
              {json({ file: data.effective.file, settings: data.effective.settings, served: data.effective.served })}
            </pre>
          </section>
        </>
      )}
    </>
  );
}
