// A JSON Schema shown readably: each property with its type, required mark, constraints,
// default and description, nested objects and arrays indented under their parent.
import { json } from "./format.js";

export function typeOf(schema) {
  if (!schema || typeof schema !== "object") return "any";
  if (schema.enum) return "enum";
  if (schema.const !== undefined) return "const";
  if (Array.isArray(schema.type)) return schema.type.join(" | ");
  if (schema.type) return schema.type;
  if (schema.properties) return "object";
  if (schema.items) return "array";
  if (schema.anyOf || schema.oneOf) return (schema.anyOf || schema.oneOf).map(typeOf).join(" | ");
  return "any";
}

function constraints(s) {
  const parts = [];
  if (s.format) parts.push(`format ${s.format}`);
  if (s.enum) parts.push(`one of ${s.enum.map((v) => JSON.stringify(v)).join(", ")}`);
  if (s.const !== undefined) parts.push(`= ${JSON.stringify(s.const)}`);
  for (const [key, label] of [["minimum", "≥"], ["maximum", "≤"], ["exclusiveMinimum", ">"], ["exclusiveMaximum", "<"]])
    if (typeof s[key] === "number") parts.push(`${label} ${s[key]}`);
  if (s.minLength !== undefined) parts.push(`length ≥ ${s.minLength}`);
  if (s.maxLength !== undefined) parts.push(`length ≤ ${s.maxLength}`);
  if (s.pattern) parts.push(`matches /${s.pattern}/`);
  if (s.minItems !== undefined) parts.push(`≥ ${s.minItems} items`);
  if (s.maxItems !== undefined) parts.push(`≤ ${s.maxItems} items`);
  if (s.default !== undefined) parts.push(`default ${JSON.stringify(s.default)}`);
  return parts;
}

function Node({ name, schema, required }) {
  const s = schema && typeof schema === "object" ? schema : {};
  const extra = constraints(s);
  return (
    <li>
      {name !== undefined && <code>{name}</code>}
      {required && <span class="required-mark" title="required"> *<span class="sr-only"> (required)</span></span>}{" "}
      <span class="schema-type">{typeOf(s)}</span>
      {extra.length > 0 && <span class="muted"> · {extra.join(" · ")}</span>}
      {s.description && <div class="muted">{s.description}</div>}
      <Children schema={s} />
    </li>
  );
}

function Children({ schema }) {
  if (schema.properties) {
    const required = new Set(schema.required || []);
    return (
      <ul class="schema-props">
        {Object.entries(schema.properties).map(([key, value]) => (
          <Node key={key} name={key} schema={value} required={required.has(key)} />
        ))}
      </ul>
    );
  }
  if (schema.items && typeof schema.items === "object" && !Array.isArray(schema.items))
    return (
      <ul class="schema-props">
        <Node name="[item]" schema={schema.items} />
      </ul>
    );
  return null;
}

export function SchemaView({ schema, label }) {
  if (!schema) return <p class="muted">None.</p>;
  const hasShape = schema.properties || schema.items;
  return (
    <>
      {hasShape ? <Children schema={schema} /> : <p><span class="schema-type">{typeOf(schema)}</span></p>}
      <details>
        <summary>{label} as JSON</summary>
        <pre tabIndex={0} aria-label={`${label} as JSON`}>{json(schema)}</pre>
      </details>
    </>
  );
}
