// Calls: the audit log, newest first, live (api/calls/stream sends each new record), filterable
// by principal, tool, source, outcome and time; a record opens its details and trace link.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, liveStream } from "./api.js";
import { clock, json, ms, time } from "./format.js";
import { StreamState } from "./stream_state.jsx";
import { VirtualList } from "./virtual_list.jsx";

const MAX_RECORDS = 10000;
const OUTCOMES = ["ok", "error", "tool_error", "protocol_error", "cancelled"];
let nextKey = 1;

function keyed(record) {
  return { ...record, _key: nextKey++ };
}

// datetime-local (the operator's time) to the API's ISO-8601 UTC.
function iso(local) {
  return local ? new Date(local).toISOString() : "";
}

// The same filters as the API's, for records that arrive on the stream.
function matches(record, f) {
  if (f.principal && record.principal !== f.principal && record.subject !== f.principal) return false;
  if (f.tool && record.target !== f.tool) return false;
  if (f.source && record.source !== f.source) return false;
  if (f.outcome === "error" ? record.outcome === "ok" : f.outcome && record.outcome !== f.outcome) return false;
  if (f.since && record.ts < iso(f.since)) return false;
  if (f.until && record.ts >= iso(f.until)) return false;
  return true;
}

function outcomeClass(outcome) {
  return outcome === "ok" ? "outcome-ok" : outcome === "cancelled" ? "outcome-other" : "outcome-error";
}

export function traceLink(template, traceId) {
  if (!template || !traceId) return null;
  const url = template.replaceAll("{trace_id}", encodeURIComponent(traceId));
  return /^https?:\/\//i.test(url) ? url : null;
}

function Details({ record, me, onClose }) {
  const link = traceLink(me.trace_viewer_url, record.trace_id);
  const { _key, ...shown } = record;
  return (
    <section class="card" aria-labelledby="call-title">
      <h2 id="call-title">
        {record.method} {record.target} <span class={`badge ${outcomeClass(record.outcome)}`}>{record.outcome}</span>
      </h2>
      <dl class="facts">
        <dt>When</dt><dd>{time(record.ts)}</dd>
        <dt>Principal</dt><dd>{record.principal}{record.subject ? ` (${record.subject})` : ""}</dd>
        <dt>Source</dt><dd>{record.source || "–"}</dd>
        <dt>Duration</dt><dd>{ms(record.duration_ms)}</dd>
        {record.code && <><dt>Code</dt><dd>{record.code}</dd></>}
        <dt>Session</dt><dd>{record.session || "–"}</dd>
        <dt>Trace id</dt>
        <dd>
          {record.trace_id ? (
            <>
              <code>{record.trace_id}</code>{" "}
              {link ? (
                <a href={link} target="_blank" rel="noopener noreferrer">Open in the trace viewer</a>
              ) : (
                <span class="muted">(no trace viewer configured: console.trace_viewer_url)</span>
              )}
            </>
          ) : (
            <span class="muted">none (tracing off)</span>
          )}
        </dd>
      </dl>
      <h3>Record</h3>
      <pre tabIndex={0} aria-label="The audit record as JSON">{json(shown)}</pre>
      <button class="secondary" onClick={onClose}>Close</button>
    </section>
  );
}

export function Calls({ me }) {
  const [draft, setDraft] = useState({ principal: "", tool: "", source: "", outcome: "", since: "", until: "" });
  const [filters, setFilters] = useState(draft);
  const [records, setRecords] = useState([]);
  const [error, setError] = useState(null);
  const [state, setState] = useState("connecting");
  const [selected, setSelected] = useState(null);
  const filtersRef = useRef(filters);
  filtersRef.current = filters;

  // The history for the filters, then whatever the stream brings that matches them.
  useEffect(() => {
    const controller = new AbortController();
    const query = new URLSearchParams({ limit: String(MAX_RECORDS) });
    for (const key of ["principal", "tool", "source", "outcome"]) if (filters[key]) query.set(key, filters[key]);
    if (filters.since) query.set("since", iso(filters.since));
    if (filters.until) query.set("until", iso(filters.until));
    api(`calls?${query}`, { signal: controller.signal })
      .then((answer) =>
        setRecords((live) => {
          const seen = new Set(live.map((r) => `${r.ts}|${r.request_id}|${r.session}`));
          const older = answer.records.filter((r) => !seen.has(`${r.ts}|${r.request_id}|${r.session}`)).map(keyed);
          return [...live, ...older].slice(0, MAX_RECORDS);
        }),
      )
      .catch((e) => controller.signal.aborted || setError(e));
    return () => controller.abort();
  }, [filters]);

  useEffect(() => {
    const controller = new AbortController();
    liveStream("calls/stream", {
      signal: controller.signal,
      onEvent: (name, record) => {
        if (name !== "call" || !matches(record, filtersRef.current)) return;
        setRecords((list) => [keyed(record), ...list].slice(0, MAX_RECORDS));
      },
      onState: setState,
    });
    return () => controller.abort();
  }, []);

  const field = (key, label, type = "text") => (
    <div>
      <label for={`f-${key}`}>{label}</label>
      <input id={`f-${key}`} type={type} value={draft[key]} onInput={(e) => setDraft({ ...draft, [key]: e.currentTarget.value })} />
    </div>
  );
  const apply = (e) => {
    e.preventDefault();
    setError(null);
    setRecords([]);
    setFilters(draft);
  };
  const sources = useMemo(() => [...new Set(records.map((r) => r.source).filter(Boolean))].sort(), [records]);

  return (
    <>
      <StreamState state={state} what="calls" />
      <form class="filters" onSubmit={apply} aria-label="Filters">
        {field("principal", "Principal")}
        {field("tool", "Tool")}
        <div>
          <label for="f-source">Source</label>
          <input id="f-source" list="f-sources" value={draft.source} onInput={(e) => setDraft({ ...draft, source: e.currentTarget.value })} />
          <datalist id="f-sources">{sources.map((s) => <option key={s} value={s} />)}</datalist>
        </div>
        <div>
          <label for="f-outcome">Outcome</label>
          <select id="f-outcome" value={draft.outcome} onChange={(e) => setDraft({ ...draft, outcome: e.currentTarget.value })}>
            <option value="">any</option>
            {OUTCOMES.map((o) => <option key={o} value={o}>{o === "error" ? "any error" : o}</option>)}
          </select>
        </div>
        {field("since", "Since", "datetime-local")}
        {field("until", "Until", "datetime-local")}
        <button type="submit">Apply</button>
      </form>
      {error && (
        <div class="alert" role="alert">
          {error.message} {error.suggestion}
        </div>
      )}
      <p class="muted" role="status" aria-live="polite">
        {records.length.toLocaleString("en")} record{records.length === 1 ? "" : "s"}
        {records.length >= MAX_RECORDS ? ` (the newest ${MAX_RECORDS.toLocaleString("en")} kept)` : ""}
      </p>
      <div class="split wide-list">
        <VirtualList
          items={records}
          rowHeight={30}
          height={520}
          label="Calls, newest first"
          resetKey={filters}
          keyOf={(r) => r._key}
          renderRow={(r) => (
            <button aria-pressed={selected?._key === r._key} onClick={() => setSelected(r)} data-call={r.target}>
              <span class="cell w-clock" title={time(r.ts)}>{clock(r.ts)}</span>
              <span class="cell w-tool">{r.target}</span>
              <span class="cell w-src">{r.source}</span>
              <span class="cell w-out"><span class={`badge ${outcomeClass(r.outcome)}`}>{r.outcome}</span></span>
              <span class="cell w-ms">{ms(r.duration_ms)}</span>
              <span class="cell w-who">{r.principal}</span>
            </button>
          )}
        />
        {selected ? <Details record={selected} me={me} onClose={() => setSelected(null)} /> : <p class="muted">Select a call to see its details.</p>}
      </div>
    </>
  );
}
