// Playground: pick a tool, fill the form generated from its inputSchema (or edit the raw JSON
// beside it), check it here, and call it through the real pipeline as the operator
// (POST api/call, an SSE stream): progress as it comes, cancel, elicitation questions answered
// in the page, and the result with its structuredContent checked against the outputSchema.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, stream } from "./api.js";
import { json } from "./format.js";
import { byPath, Field } from "./schema_form.jsx";
import { initialValue, validate } from "./validate.js";

function Elicitation({ request, onAnswer }) {
  const schema = request.requestedSchema || { type: "object" };
  const [value, setValue] = useState(() => initialValue(schema) || {});
  const [errors, setErrors] = useState([]);
  const answer = (action) => {
    if (action === "accept") {
      const found = validate(schema, value);
      setErrors(found);
      if (found.length) return;
    }
    onAnswer(action, action === "accept" ? value : undefined);
  };
  return (
    <section class="card" aria-labelledby="elicit-title" role="dialog">
      <h2 id="elicit-title">The tool asks</h2>
      <p>{request.message}</p>
      <form onSubmit={(e) => (e.preventDefault(), answer("accept"))}>
        <Field schema={schema} name="answer" path="" value={value} onChange={setValue} errors={byPath(errors)} />
        <div class="actions">
          <button type="submit">Accept</button>
          <button type="button" class="secondary" onClick={() => answer("decline")}>Decline</button>
          <button type="button" class="secondary" onClick={() => answer("cancel")}>Cancel</button>
        </div>
      </form>
    </section>
  );
}

function Content({ item }) {
  if (item.type === "text") return <pre class="content-text" tabIndex={0} aria-label="Text content">{item.text}</pre>;
  if (item.type === "image" && /^image\/(png|jpeg|gif|webp)$/.test(item.mimeType))
    return <img alt="Image the tool returned" src={`data:${item.mimeType};base64,${item.data}`} />;
  if (item.type === "resource_link")
    return <p>Resource link: <code>{item.uri}</code> {item.name}</p>;
  return <pre tabIndex={0} aria-label={`${item.type} content as JSON`}>{json(item)}</pre>;
}

function Result({ result, tool }) {
  const checks = tool?.outputSchema && result.structuredContent !== undefined ? validate(tool.outputSchema, result.structuredContent) : null;
  return (
    <section class="card result" aria-labelledby="result-title">
      <h2 id="result-title">
        Result {result.isError ? <span class="badge outcome-error">tool error</span> : <span class="badge outcome-ok">ok</span>}
      </h2>
      <h3>Content</h3>
      {(result.content || []).map((item, i) => <Content key={i} item={item} />)}
      {result.structuredContent !== undefined && (
        <>
          <h3>structuredContent</h3>
          {checks && checks.length === 0 && <p class="ok-text schema-check">Matches the tool's outputSchema.</p>}
          {checks && checks.length > 0 && (
            <div class="alert schema-check" role="alert">
              Does not match the outputSchema:
              <ul>{checks.map((c, i) => <li key={i}><code>{c.path || "/"}</code> {c.message}</li>)}</ul>
            </div>
          )}
          {!checks && <p class="muted">The tool declares no outputSchema.</p>}
          <pre class="structured" tabIndex={0} aria-label="structuredContent as JSON">{json(result.structuredContent)}</pre>
        </>
      )}
      {result._meta && (
        <>
          <h3>_meta</h3>
          <pre tabIndex={0} aria-label="_meta as JSON">{json(result._meta)}</pre>
        </>
      )}
    </section>
  );
}

export function Playground() {
  const [tools, setTools] = useState(null);
  const [loadError, setLoadError] = useState(null);
  const [name, setName] = useState(() => new URLSearchParams(location.search).get("tool") || "");
  const [args, setArgs] = useState({});
  const [raw, setRaw] = useState("{}");
  const [rawError, setRawError] = useState(null);
  const [errors, setErrors] = useState([]);
  const [call, setCall] = useState(null); // {id, running, progress, elicitation, result, error}
  const controller = useRef(null);

  useEffect(() => {
    api("tools")
      .then((answer) => setTools(answer.tools.slice().sort((a, b) => a.name.localeCompare(b.name))))
      .catch(setLoadError);
    return () => controller.current?.abort();
  }, []);

  const tool = tools?.find((t) => t.name === name);
  useEffect(() => {
    if (!tool) return;
    const start = initialValue(tool.inputSchema) || {};
    setArgs(start);
    setRaw(json(start));
    setRawError(null);
    setErrors([]);
    setCall(null);
  }, [tool?.name]);

  const updateArgs = (value) => {
    const v = value === undefined ? {} : value;
    setArgs(v);
    setRaw(json(v));
    setRawError(null);
    if (errors.length) setErrors(validate(tool.inputSchema, v));
  };

  const send = async (e) => {
    e.preventDefault();
    if (rawError) return;
    const found = validate(tool.inputSchema, args);
    setErrors(found);
    if (found.length) {
      document.getElementById("argument-errors")?.focus();
      return;
    }
    controller.current?.abort();
    controller.current = new AbortController();
    let state = { running: true, progress: null, elicitation: null, result: null, error: null, id: null };
    const update = (change) => setCall((state = { ...state, ...change }));
    update({});
    try {
      await stream("call", {
        method: "POST",
        body: { tool: tool.name, arguments: args },
        signal: controller.current.signal,
        onEvent: (event, data) => {
          if (event === "started") update({ id: data.call_id });
          else if (event === "progress") update({ progress: data });
          else if (event === "elicitation") update({ elicitation: data });
          else if (event === "result") update({ result: data, running: false, elicitation: null });
          else if (event === "error") update({ error: data, running: false, elicitation: null });
        },
      });
      if (state.running) update({ running: false, error: state.error || { message: "The call's stream ended without a result." } });
    } catch (err) {
      if (err.name !== "AbortError") update({ running: false, error: { code: err.code, message: err.message, suggestion: err.suggestion } });
    }
  };

  const cancel = async () => {
    if (!call?.id) return controller.current?.abort();
    try {
      await api(`call/${encodeURIComponent(call.id)}/cancel`, { method: "POST" });
    } catch (err) {
      setCall({ ...call, error: { message: err.message } });
    }
  };

  const answer = async (action, content) => {
    const elicitation = call.elicitation;
    setCall({ ...call, elicitation: null });
    try {
      await api(`call/${encodeURIComponent(call.id)}/elicitation/${encodeURIComponent(elicitation.elicitation_id)}`, {
        method: "POST",
        body: content === undefined ? { action } : { action, content },
      });
    } catch (err) {
      setCall((c) => ({ ...c, error: { message: err.message } }));
    }
  };

  if (loadError) return <div class="alert" role="alert">{loadError.message} {loadError.suggestion}</div>;
  if (!tools) return <p role="status">Loading tools…</p>;
  const fieldErrors = byPath(errors);
  return (
    <>
      <div class="filters">
        <div>
          <label for="pick-tool">Tool</label>
          <select id="pick-tool" value={name} onChange={(e) => (setName(e.currentTarget.value), history.replaceState(null, "", `?tool=${encodeURIComponent(e.currentTarget.value)}`))}>
            <option value="">— choose a tool —</option>
            {tools.map((t) => <option key={t.name} value={t.name}>{t.name}{t.title ? ` (${t.title})` : ""}</option>)}
          </select>
        </div>
      </div>
      {tool && (
        <form onSubmit={send} aria-label={`Arguments of ${tool.name}`} noValidate>
          <p>{tool.description}</p>
          {errors.length > 0 && (
            <div class="alert" role="alert" id="argument-errors" tabIndex={-1}>
              <strong>Not sent: the arguments do not match the tool's inputSchema.</strong>
              <ul>{errors.map((err, i) => <li key={i}><code>{err.path || "/"}</code> {err.message}</li>)}</ul>
            </div>
          )}
          <div class="split">
            <div class="card">
              <h2>Form</h2>
              <Field schema={tool.inputSchema} name="arguments" path="" value={args} onChange={updateArgs} errors={fieldErrors} />
            </div>
            <div class="card">
              <h2><label for="raw-arguments">Arguments as JSON</label></h2>
              <textarea id="raw-arguments" rows={18} value={raw} aria-invalid={!!rawError} aria-describedby={rawError ? "raw-error" : undefined}
                onInput={(e) => {
                  const text = e.currentTarget.value;
                  setRaw(text);
                  try {
                    const parsed = JSON.parse(text);
                    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("the arguments must be a JSON object");
                    setArgs(parsed);
                    setRawError(null);
                  } catch (err) {
                    setRawError(err.message);
                  }
                }} />
              {rawError && <p id="raw-error" class="field-error">{rawError}</p>}
            </div>
          </div>
          <div class="actions">
            <button type="submit" disabled={call?.running || !!rawError}>Call {tool.name}</button>
            {call?.running && <button type="button" class="danger" onClick={cancel}>Cancel the call</button>}
          </div>
        </form>
      )}
      {call?.running && (
        <div class="progress" role="status" aria-live="polite">
          {call.progress ? (
            <>
              <label for="call-progress">{call.progress.message || "Working…"}</label>{" "}
              <progress id="call-progress" value={call.progress.progress} max={call.progress.total || undefined} />
            </>
          ) : (
            "Calling…"
          )}
        </div>
      )}
      {call?.elicitation && <Elicitation request={call.elicitation} onAnswer={answer} />}
      {call?.error && (
        <div class="alert" role="alert">
          <strong>The call failed{call.error.code !== undefined ? ` (${call.error.code})` : ""}:</strong> {call.error.message} {call.error.suggestion}
        </div>
      )}
      {call?.result && <Result result={call.result} tool={tool} />}
    </>
  );
}
