// Calls: the audit log, newest first, live (api/calls/stream sends each new record), filterable
// by principal, tool, source, outcome and time; a record opens its details and trace link.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, liveStream } from "./api.js";
import { clock, json, ms, time } from "./format.js";
import { StreamState } from "./stream_state.jsx";
import { VirtualList } from "./virtual_list.jsx";

const MAX_RECORDS = 10000;
const FIRST_PAGE = 200;  // records asked for first: rows to show at once
const PAGE = 1000;       // then older ones, this many at a time
const OUTCOMES = ["ok", "error", "tool_error", "protocol_error", "cancelled"];
let nextKey = 1;

function keyed(record) {
  return { ...record, _key: nextKey++ };
}

// What tells one record from another across pages and the live stream.
function recordKey(r) {
  return `${r.ts}|${r.request_id}|${r.session}`;
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
  const seenRef = useRef(new Set());  // the records listed (recordKey), history and live alike

  // The history for the filters, newest first, in pages: the first one small, so that rows
  // show at once, then the older ones in pages the main thread takes without a long task
  // (10,000 records are about 3 MB of JSON: read whole they held a slow laptop for a second).
  // Whatever the stream brings meanwhile that matches the filters goes on top.
  useEffect(() => {
    const controller = new AbortController();
    const base = new URLSearchParams();
    for (const key of ["principal", "tool", "source", "outcome"]) if (filters[key]) base.set(key, filters[key]);
    if (filters.since) base.set("since", iso(filters.since));
    const seen = (seenRef.current = new Set());
    (async () => {
      let until = filters.until ? iso(filters.until) : "";
      let limit = FIRST_PAGE;
      let loaded = 0;
      for (;;) {
        const query = new URLSearchParams(base);
        query.set("limit", String(limit));
        if (until) query.set("until", until);
        const answer = await api(`calls?${query}`, { signal: controller.signal });
        if (controller.signal.aborted) return;
        const older = answer.records.filter((r) => !seen.has(recordKey(r)));
        for (const r of older) seen.add(recordKey(r));
        loaded += older.length;
        if (older.length) setRecords((list) => [...list, ...older.map(keyed)].slice(0, MAX_RECORDS));
        const oldest = answer.records[answer.records.length - 1];
        if (answer.records.length < limit || !oldest || loaded >= MAX_RECORDS) return;
        // `until` is exclusive: the next page asks from the oldest record's millisecond on (those
        // of that millisecond already listed are left out above). A page that added nothing
        // (more than a page's worth of records in one millisecond) moves past it.
        until = new Date(Date.parse(oldest.ts) + (older.length > 0 ? 1 : 0)).toISOString();
        limit = PAGE;
      }
    })().catch((e) => controller.signal.aborted || setError(e));
    return () => controller.abort();
  }, [filters]);

  useEffect(() => {
    const controller = new AbortController();
    liveStream("calls/stream", {
      signal: controller.signal,
      onEvent: (name, record) => {
        if (name !== "call" || !matches(record, filtersRef.current)) return;
        seenRef.current.add(recordKey(record));
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
