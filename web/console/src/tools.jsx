// Tools: the served catalog, searched with the gateway's BM25 index (api/tools?q=), filtered
// by profile and source; a tool shows its schemas, annotations, scopes, task support and figures.
import { useEffect, useState } from "preact/hooks";
import { api } from "./api.js";
import { ms, number } from "./format.js";
import { pages } from "./pages.js";
import { navigate } from "./router.js";
import { SchemaView } from "./schema_view.jsx";
import { VirtualList } from "./virtual_list.jsx";

function ToolDetails({ tool }) {
  const annotations = Object.entries(tool.annotations || {});
  const playground = pages.some((p) => p.id === "playground");
  return (
    <section class="card" aria-labelledby="tool-title">
      <h2 id="tool-title">
        {tool.title || tool.name} {tool.title && <code class="muted">{tool.name}</code>}
      </h2>
      <p>{tool.description}</p>
      <dl class="facts">
        <dt>Source</dt><dd>{tool.source}</dd>
        <dt>Task support</dt><dd>{tool.task_support}</dd>
        <dt>Scopes</dt><dd>{tool.scopes?.length ? tool.scopes.join(", ") : "none needed"}</dd>
        <dt>Annotations</dt>
        <dd>{annotations.length ? annotations.map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(", ") : "none"}</dd>
        <dt>Calls</dt><dd>{number(tool.calls, 0)} ({number(tool.errors, 0)} errors)</dd>
        <dt>p50 / p99</dt><dd>{ms(tool.p50_ms)} / {ms(tool.p99_ms)}</dd>
      </dl>
      {playground && (
        <button onClick={() => navigate("playground", new URLSearchParams({ tool: tool.name }).toString())}>
          Try it in the playground
        </button>
      )}
      <h3>Input schema</h3>
      <SchemaView schema={tool.inputSchema} label="Input schema" />
      <h3>Output schema</h3>
      <SchemaView schema={tool.outputSchema} label="Output schema" />
    </section>
  );
}

export function Tools() {
  const [q, setQ] = useState("");
  const [query, setQuery] = useState("");
  const [profile, setProfile] = useState("");
  const [source, setSource] = useState("");
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  const [selected, setSelected] = useState(null);

  useEffect(() => {
    const timer = setTimeout(() => setQuery(q.trim()), 200);
    return () => clearTimeout(timer);
  }, [q]);

  useEffect(() => {
    const controller = new AbortController();
    const params = new URLSearchParams();
    if (query) params.set("q", query);
    if (profile) params.set("profile", profile);
    if (source) params.set("source", source);
    api(`tools?${params}`, { signal: controller.signal })
      .then((answer) => (setData({ ...answer, query }), setError(null)))
      .catch((e) => controller.signal.aborted || setError(e));
    return () => controller.abort();
  }, [query, profile, source]);

  const tools = data?.tools || [];
  const current = selected && tools.find((t) => t.name === selected);
  return (
    <>
      <div class="filters">
        <div>
          <label for="tool-search">Search</label>
          <input id="tool-search" type="search" value={q} placeholder="name, description…" onInput={(e) => setQ(e.currentTarget.value)} />
        </div>
        <div>
          <label for="tool-source">Source</label>
          <select id="tool-source" value={source} onChange={(e) => setSource(e.currentTarget.value)}>
            <option value="">all</option>
            {data?.sources.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </div>
      </div>
      {data?.profiles?.length > 0 && (
        <div class="chips" role="group" aria-label="Profiles">
          <button aria-pressed={profile === ""} onClick={() => setProfile("")}>All tools</button>
          {data.profiles.map((p) => (
            <button key={p.name} aria-pressed={profile === p.name} onClick={() => setProfile(profile === p.name ? "" : p.name)}>
              {p.name} ({p.tools.length})
            </button>
          ))}
        </div>
      )}
      {error && <div class="alert" role="alert">{error.message} {error.suggestion}</div>}
      <p class="muted" role="status" aria-live="polite">
        {data ? `${tools.length.toLocaleString("en")} tool${tools.length === 1 ? "" : "s"}${data.query ? `, ranked for “${data.query}”` : ""}` : "Loading…"}
      </p>
      <div class="split">
        <VirtualList
          items={tools}
          rowHeight={34}
          height={560}
          label="Tools"
          resetKey={`${query}|${profile}|${source}`}
          renderRow={(t) => (
            <button aria-pressed={selected === t.name} onClick={() => setSelected(t.name)} data-tool={t.name}>
              <span class="cell w-tool">{t.name}</span>
              <span class="cell w-src">{t.source}</span>
              <span class="cell w-desc">{t.title || t.description}</span>
            </button>
          )}
        />
        {current ? <ToolDetails tool={current} /> : <p class="muted">Select a tool to see its schemas and figures.</p>}
      </div>
    </>
  );
}
