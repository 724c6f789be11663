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
          <section class="card" aria-labelledby="effective-title">
            <h2 id="effective-title">Effective configuration</h2>
            <p class="muted">Secrets are shown as ***.</p>
            <pre tabIndex={0} aria-label="Effective configuration as JSON">{json(data.effective)}</pre>
          </section>
        </>
      )}
    </>
  );
}
