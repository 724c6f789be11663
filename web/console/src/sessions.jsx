// Sessions and tasks: the active MCP sessions (end one) and the tasks (cancel one), refreshed
// every few seconds.
import { useEffect, useState } from "preact/hooks";
import { api } from "./api.js";
import { duration, time } from "./format.js";

function usePolled(path, key, every = 3000) {
  const [rows, setRows] = useState(null);
  const [error, setError] = useState(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    api(path, { signal: controller.signal })
      .then((answer) => (setRows(answer[key]), setError(null)))
      .catch((e) => controller.signal.aborted || setError(e));
    const timer = setTimeout(() => setTick((t) => t + 1), every);
    return () => (controller.abort(), clearTimeout(timer));
  }, [tick]);
  return [rows, error, () => setTick((t) => t + 1)];
}

function Action({ label, danger, run, done }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  return (
    <>
      <button
        class={danger ? "danger" : "secondary"}
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          setError(null);
          try {
            await run();
            done();
          } catch (e) {
            setError(e);
          }
          setBusy(false);
        }}
      >
        {label}
      </button>
      {error && <span class="bad-text" role="alert"> {error.message}</span>}
    </>
  );
}

export function Sessions() {
  const [sessions, sessionsError, refreshSessions] = usePolled("sessions", "sessions");
  const [tasks, tasksError, refreshTasks] = usePolled("tasks", "tasks");
  return (
    <>
      <section class="card" aria-labelledby="sessions-title">
        <h2 id="sessions-title">Sessions{sessions ? ` (${sessions.length})` : ""}</h2>
        {sessionsError && <div class="alert" role="alert">{sessionsError.message} {sessionsError.suggestion}</div>}
        {sessions && sessions.length === 0 && <p class="muted">No active session.</p>}
        {sessions?.length > 0 && (
          <table>
            <thead>
              <tr>
                <th scope="col">Session</th><th scope="col">Client</th><th scope="col">Protocol</th><th scope="col">Transport</th>
                <th scope="col">Principal</th><th scope="col">Profile</th><th scope="col">Age</th><th scope="col">Idle</th>
                <th scope="col">Replica</th><th scope="col"><span class="sr-only">Action</span></th>
              </tr>
            </thead>
            <tbody>
              {sessions.map((s) => (
                <tr key={s.id} data-session={s.id}>
                  <th scope="row"><code>{s.id.slice(0, 12)}</code></th>
                  <td>{s.client ? `${s.client.name} ${s.client.version}` : "–"}</td>
                  <td>{s.protocol_version}</td>
                  <td>{s.transport}</td>
                  <td>{s.principal || "–"}</td>
                  <td>{s.profile || "–"}</td>
                  <td>{duration(s.age_s)}</td>
                  <td>{duration(s.idle_s)}</td>
                  <td>{s.replica || "–"}</td>
                  <td>
                    <Action label={<>End<span class="sr-only"> session {s.id.slice(0, 12)}</span></>} danger
                      run={() => api(`sessions/${encodeURIComponent(s.id)}`, { method: "DELETE" })} done={refreshSessions} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section class="card" aria-labelledby="tasks-title">
        <h2 id="tasks-title">Tasks{tasks ? ` (${tasks.length})` : ""}</h2>
        {tasksError && <div class="alert" role="alert">{tasksError.message} {tasksError.suggestion}</div>}
        {tasks && tasks.length === 0 && <p class="muted">No task.</p>}
        {tasks?.length > 0 && (
          <table>
            <thead>
              <tr>
                <th scope="col">Task</th><th scope="col">Tool</th><th scope="col">Status</th><th scope="col">Message</th>
                <th scope="col">Session</th><th scope="col">Created</th><th scope="col">Updated</th>
                <th scope="col"><span class="sr-only">Action</span></th>
              </tr>
            </thead>
            <tbody>
              {tasks.map((t) => (
                <tr key={t.id} data-task={t.id}>
                  <th scope="row"><code>{t.id.slice(0, 12)}</code></th>
                  <td>{t.tool}</td>
                  <td><span class={`badge status-${t.status}`}>{t.status}</span></td>
                  <td>{t.status_message || "–"}</td>
                  <td>
                    {t.replica === "another"
                      ? <span class="muted">on another replica</span>
                      : <code>{(t.session || "").slice(0, 12) || "–"}</code>}
                  </td>
                  <td>{time(t.created_at)}</td>
                  <td>{time(t.updated_at)}</td>
                  <td>
                    {(t.status === "working" || t.status === "input_required") && (
                      <Action label={<>Cancel<span class="sr-only"> task {t.id.slice(0, 12)}</span></>} danger
                        run={() => api(`tasks/${encodeURIComponent(t.id)}/cancel`, { method: "POST" })} done={refreshTasks} />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}
