// Overview: every source's state, breaker, last error, rates and latency, live from
// api/overview/stream (an `overview` event every 2 s), with the last hour as small charts.
import { Fragment } from "preact";
import { useEffect, useState } from "preact/hooks";
import { liveStream } from "./api.js";
import { Chart } from "./chart.jsx";
import { duration, ms, number, percent, time } from "./format.js";
import { StreamState } from "./stream_state.jsx";

const COLORS = { calls: "#1f4e8c", errors: "#cf222e", p50: "#1a7f37", p99: "#9a6700" };

function perSecond(series) {
  return series.calls.map((c) => (c === null ? null : c / series.step_s));
}
function errorRate(series) {
  return series.calls.map((c, i) => (c ? (series.errors[i] || 0) / c : c === null ? null : 0));
}

export function Charts({ name, series }) {
  if (!series) return null;
  return (
    <div class="charts">
      <Chart title={`${name}: calls/s`} unit="/s" minTop={0.1} step={series.step_s} end={series.end}
        lines={[{ key: "calls", label: "calls/s", color: COLORS.calls, values: perSecond(series) }]} />
      <Chart title={`${name}: latency`} unit=" ms" step={series.step_s} end={series.end}
        lines={[
          { key: "p50", label: "p50", color: COLORS.p50, values: series.p50_ms },
          { key: "p99", label: "p99", color: COLORS.p99, values: series.p99_ms },
        ]} />
      <Chart title={`${name}: error rate`} unit="" minTop={0.05} step={series.step_s} end={series.end}
        lines={[{ key: "errors", label: "errors/calls", color: COLORS.errors, values: errorRate(series) }]} />
    </div>
  );
}

export function StateBadge({ state }) {
  return <span class={`badge state-${state}`}>{state}</span>;
}

function Pressure({ label, value }) {
  return (
    <div class="pressure">
      <label>
        {label} <meter min="0" max="1" low="0.7" high="0.9" optimum="0" value={value} /> {percent(value)}
      </label>
    </div>
  );
}

export function Overview() {
  const [data, setData] = useState(null);
  const [state, setState] = useState("connecting");
  const [open, setOpen] = useState(null);

  useEffect(() => {
    const controller = new AbortController();
    liveStream("overview/stream", {
      signal: controller.signal,
      onEvent: (name, payload) => name === "overview" && setData(payload),
      onState: setState,
    });
    return () => controller.abort();
  }, []);

  if (!data) return <StreamState state={state} what="overview" />;
  const { server, sources, totals, budgets, rate_limits } = data;
  return (
    <>
      <StreamState state={state} what="overview" />
      <section aria-labelledby="server-title" class="card">
        <h2 id="server-title">Server</h2>
        <dl class="facts">
          <dt>Name</dt><dd>{server.name} {server.version}</dd>
          <dt>Uptime</dt><dd>{duration(server.uptime_s)}</dd>
          <dt>Transport</dt><dd>{server.transport}</dd>
          <dt>Replicas seen</dt>
          <dd>
            {server.replicas?.length
              ? server.replicas
                  .map((r) => (r.self ? `${r.id} (this one)` : `${r.id} (${r.version ? r.version + ", " : ""}seen ${duration(r.last_seen_s)} ago)`))
                  .join(", ")
              : "this one only"}
          </dd>
          <dt>Calls/s</dt><dd>{number(totals.calls_per_s, 2)}</dd>
          <dt>p50 / p99</dt><dd>{ms(totals.p50_ms)} / {ms(totals.p99_ms)}</dd>
          <dt>Error rate</dt><dd>{percent(totals.error_rate)}</dd>
        </dl>
        {(budgets || rate_limits?.length > 0) && (
          <div class="pressures">
            {budgets && (
              <Pressure
                label={`Budget: highest share a request used (last minute)${budgets.refused_last_hour ? `, ${budgets.refused_last_hour} calls refused (last hour)` : ""}`}
                value={budgets.peak}
              />
            )}
            {rate_limits?.map((r) => <Pressure key={r.name} label={`Rate limit ${r.name}`} value={r.pressure} />)}
          </div>
        )}
        <Charts name="All sources" series={totals.series} />
      </section>
      <section aria-labelledby="sources-title" class="card">
        <h2 id="sources-title">Sources ({sources.length})</h2>
        <table class="sources">
          <thead>
            <tr>
              <th scope="col">Source</th><th scope="col">Kind</th><th scope="col">State</th><th scope="col">Breaker</th>
              <th scope="col">Tools</th><th scope="col">Calls/s</th><th scope="col">p50</th><th scope="col">p99</th>
              <th scope="col">Errors</th><th scope="col">Last error</th><th scope="col"><span class="sr-only">Charts</span></th>
            </tr>
          </thead>
          <tbody>
            {sources.map((s) => (
              <Fragment key={s.name}>
                <tr data-source={s.name}>
                  <th scope="row">{s.name}</th>
                  <td>{s.kind}</td>
                  <td><StateBadge state={s.state} /></td>
                  <td>{s.breaker === "none" ? "–" : s.breaker.replace("_", " ")}</td>
                  <td>{s.tools}</td>
                  <td>{number(s.calls_per_s, 2)}</td>
                  <td>{ms(s.p50_ms)}</td>
                  <td>{ms(s.p99_ms)}</td>
                  <td>{percent(s.error_rate)}</td>
                  <td class="error-cell">{s.last_error ? <>{s.last_error.message} <span class="muted">({time(s.last_error.at)})</span></> : "–"}</td>
                  <td>
                    <button class="link" aria-expanded={open === s.name} onClick={() => setOpen(open === s.name ? null : s.name)}>
                      {open === s.name ? "Hide charts" : "Charts"}
                      <span class="sr-only"> of {s.name}</span>
                    </button>
                  </td>
                </tr>
                {open === s.name && (
                  <tr>
                    <td colSpan={11}><Charts name={s.name} series={s.series} /></td>
                  </tr>
                )}
              </Fragment>
            ))}
          </tbody>
        </table>
      </section>
    </>
  );
}
