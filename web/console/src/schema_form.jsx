// A form generated from a JSON Schema: objects as fieldsets, arrays as lists with add and
// remove, enums as selects, booleans as checkboxes, numbers and strings as inputs (the
// input's type from the format), required marks, defaults, and each field's errors beside it.
// Anything the form cannot draw (anyOf, untyped values) is a small JSON box.
import { useEffect, useState } from "preact/hooks";
import { initialValue } from "./validate.js";
import { typeOf } from "./schema_view.jsx";

const INPUT_TYPES = { email: "email", uri: "url", url: "url", date: "date", time: "time" };

function fieldId(path) {
  return `field${path.replace(/[^A-Za-z0-9_-]/g, (c) => `_${c.charCodeAt(0).toString(16)}`)}` || "field-root";
}
function escape(key) {
  return String(key).replaceAll("~", "~0").replaceAll("/", "~1");
}

function Messages({ id, errors }) {
  if (!errors?.length) return null;
  return (
    <span id={id} class="field-error">
      {errors.join("; ")}
    </span>
  );
}

function Label({ id, name, required, schema }) {
  return (
    <label for={id}>
      {schema.title || name}
      {required && <span class="required-mark" aria-hidden="true"> *</span>}
      {required && <span class="sr-only"> (required)</span>}
      <span class="muted"> {typeOf(schema)}{schema.format ? `, ${schema.format}` : ""}</span>
    </label>
  );
}

function JsonBox({ id, value, onChange, invalid, describedBy }) {
  const [text, setText] = useState(value === undefined ? "" : JSON.stringify(value));
  const [bad, setBad] = useState(false);
  useEffect(() => {
    let same = false;
    try {
      same = text !== "" && JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
    } catch {
      // the text is being edited
    }
    if (!same && !bad) setText(value === undefined ? "" : JSON.stringify(value));
  }, [value]);
  return (
    <>
      <textarea id={id} rows={2} value={text} aria-invalid={invalid || bad} aria-describedby={describedBy}
        onInput={(e) => {
          const t = e.currentTarget.value;
          setText(t);
          if (t.trim() === "") return (setBad(false), onChange(undefined));
          try {
            onChange(JSON.parse(t));
            setBad(false);
          } catch {
            setBad(true);
          }
        }} />
      {bad && <span class="field-error">Not valid JSON yet.</span>}
    </>
  );
}

export function Field({ schema = {}, name, value, onChange, path, errors, required }) {
  const id = fieldId(path);
  const own = errors[path];
  const errorId = `${id}-error`;
  const described = own?.length ? errorId : schema.description ? `${id}-help` : undefined;
  const help = schema.description && <span id={`${id}-help`} class="help">{schema.description}</span>;
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type || (schema.properties ? "object" : schema.items ? "array" : undefined);

  if (type === "object" && !schema.anyOf && !schema.oneOf) {
    const props = schema.properties || {};
    const req = new Set(schema.required || []);
    const current = value && typeof value === "object" && !Array.isArray(value) ? value : {};
    const body = Object.entries(props).map(([key, sub]) => (
      <Field key={key} schema={sub} name={key} path={`${path}/${escape(key)}`} errors={errors} required={req.has(key)}
        value={current[key]}
        onChange={(v) => {
          const next = { ...current };
          if (v === undefined) delete next[key];
          else next[key] = v;
          onChange(next);
        }} />
    ));
    if (path === "") return <div>{body}{own && <Messages id={errorId} errors={own} />}</div>;
    return (
      <fieldset aria-describedby={described}>
        <legend>
          {schema.title || name}
          {required && <span class="required-mark" aria-hidden="true"> *</span>}
          {required && <span class="sr-only"> (required)</span>}
        </legend>
        {help}
        {body}
        {Object.keys(props).length === 0 && (
          <div class="form-field">
            <label for={id}>{name} (JSON object)</label>
            <JsonBox id={id} value={value} onChange={onChange} invalid={!!own} />
          </div>
        )}
        <Messages id={errorId} errors={own} />
      </fieldset>
    );
  }

  if (type === "array" && schema.items && typeof schema.items === "object" && !Array.isArray(schema.items)) {
    const items = Array.isArray(value) ? value : [];
    return (
      <fieldset aria-describedby={described}>
        <legend>
          {schema.title || name}
          {required && <span class="required-mark" aria-hidden="true"> *</span>}
          {required && <span class="sr-only"> (required)</span>}
          <span class="muted"> list of {typeOf(schema.items)}</span>
        </legend>
        {help}
        {items.map((item, i) => (
          <div class="array-item" key={i}>
            <Field schema={schema.items} name={`${name} ${i + 1}`} path={`${path}/${i}`} errors={errors} required value={item}
              onChange={(v) => onChange(items.map((old, j) => (j === i ? v : old)))} />
            <button type="button" class="secondary" onClick={() => onChange(items.filter((_, j) => j !== i))}>
              Remove<span class="sr-only"> {name} {i + 1}</span>
            </button>
          </div>
        ))}
        <button type="button" class="secondary" onClick={() => onChange([...items, initialValue(schema.items) ?? emptyOf(schema.items)])}>
          Add<span class="sr-only"> to {name}</span>
        </button>
        <Messages id={errorId} errors={own} />
      </fieldset>
    );
  }

  let control;
  if (schema.enum) {
    const index = schema.enum.findIndex((e) => JSON.stringify(e) === JSON.stringify(value));
    control = (
      <select id={id} value={index < 0 ? "" : String(index)} aria-invalid={!!own} aria-describedby={described} aria-required={required}
        onChange={(e) => onChange(e.currentTarget.value === "" ? undefined : schema.enum[Number(e.currentTarget.value)])}>
        <option value="">{required ? "— choose —" : "— none —"}</option>
        {schema.enum.map((e, i) => <option key={i} value={String(i)}>{String(e)}</option>)}
      </select>
    );
  } else if (type === "boolean") {
    control = (
      <select id={id} value={value === undefined ? "" : String(value)} aria-invalid={!!own} aria-describedby={described} aria-required={required}
        onChange={(e) => onChange(e.currentTarget.value === "" ? undefined : e.currentTarget.value === "true")}>
        <option value="">— none —</option>
        <option value="true">true</option>
        <option value="false">false</option>
      </select>
    );
  } else if (type === "number" || type === "integer") {
    control = (
      <input id={id} type="text" inputMode="decimal" value={value === undefined ? "" : String(value)} aria-invalid={!!own}
        aria-describedby={described} aria-required={required} placeholder={schema.default !== undefined ? String(schema.default) : ""}
        onInput={(e) => {
          const t = e.currentTarget.value.trim();
          // Kept as text when it is not a number, so the check says what is wrong.
          onChange(t === "" ? undefined : Number.isNaN(Number(t)) ? t : Number(t));
        }} />
    );
  } else if (type === "string") {
    control = (
      <input id={id} type={INPUT_TYPES[schema.format] || "text"} value={value ?? ""} aria-invalid={!!own} aria-describedby={described}
        aria-required={required} placeholder={schema.format === "date-time" ? "2026-11-28T09:30:00Z" : ""}
        onInput={(e) => onChange(e.currentTarget.value === "" ? undefined : e.currentTarget.value)} />
    );
  } else {
    control = <JsonBox id={id} value={value} onChange={onChange} invalid={!!own} describedBy={described} />;
  }
  return (
    <div class="form-field">
      <Label id={id} name={name} required={required} schema={schema} />
      {control}
      {help}
      <Messages id={errorId} errors={own} />
    </div>
  );
}

function emptyOf(schema) {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === "object" || schema.properties) return {};
  if (type === "array") return [];
  return undefined;
}

// The errors of validate() by path, for the fields.
export function byPath(errors) {
  const map = {};
  for (const e of errors) (map[e.path] ||= []).push(e.message);
  return map;
}
