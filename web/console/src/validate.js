// JSON Schema checks in the page, before a call is sent and on a structured result: the
// keywords tools' schemas use (type, required, properties, additionalProperties, items, enum,
// const, bounds, lengths, pattern, the common formats, anyOf/oneOf/allOf). The server validates
// again with its full validator; this is for telling the operator at once.
// Returns [{path, message}], path a JSON Pointer ("" for the root).

const FORMATS = {
  "date-time": (v) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i.test(v) && !Number.isNaN(Date.parse(v)),
  date: (v) => /^\d{4}-\d\d-\d\d$/.test(v) && !Number.isNaN(Date.parse(v)),
  time: (v) => /^\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?$/i.test(v),
  email: (v) => /^[^\s@]+@[^\s@]+$/.test(v),
  uri: (v) => /^[a-z][a-z0-9+.-]*:\S*$/i.test(v),
  url: (v) => /^[a-z][a-z0-9+.-]*:\S*$/i.test(v),
  uuid: (v) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v),
  ipv4: (v) => /^(\d{1,3})(\.\d{1,3}){3}$/.test(v) && v.split(".").every((n) => Number(n) <= 255),
};

function kind(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (Number.isInteger(value)) return "integer";
  return typeof value;
}

function typeMatches(type, value) {
  const k = kind(value);
  if (type === "number") return k === "number" || k === "integer";
  return k === type;
}

function equal(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

function escape(key) {
  return String(key).replaceAll("~", "~0").replaceAll("/", "~1");
}

export function validate(schema, value, path = "", errors = []) {
  if (schema === true || schema === undefined || schema === null) return errors;
  if (schema === false) {
    errors.push({ path, message: "no value is allowed here" });
    return errors;
  }
  const push = (message) => errors.push({ path, message });
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => typeMatches(t, value))) {
      push(`must be ${types.join(" or ")}, not ${kind(value) === "integer" ? "number" : kind(value)}`);
      return errors;
    }
  }
  if (schema.enum && !schema.enum.some((e) => equal(e, value)))
    push(`must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(", ")}`);
  if (schema.const !== undefined && !equal(schema.const, value)) push(`must be ${JSON.stringify(schema.const)}`);

  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) push(`must be at least ${schema.minimum}`);
    if (typeof schema.maximum === "number" && value > schema.maximum) push(`must be at most ${schema.maximum}`);
    if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum) push(`must be more than ${schema.exclusiveMinimum}`);
    if (typeof schema.exclusiveMaximum === "number" && value >= schema.exclusiveMaximum) push(`must be less than ${schema.exclusiveMaximum}`);
    if (typeof schema.multipleOf === "number" && Math.abs(value / schema.multipleOf - Math.round(value / schema.multipleOf)) > 1e-9)
      push(`must be a multiple of ${schema.multipleOf}`);
  }
  if (typeof value === "string") {
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength) push(`must be at least ${schema.minLength} characters`);
    if (schema.maxLength !== undefined && length > schema.maxLength) push(`must be at most ${schema.maxLength} characters`);
    if (schema.pattern) {
      try {
        if (!new RegExp(schema.pattern, "u").test(value)) push(`must match /${schema.pattern}/`);
      } catch {
        // a pattern JavaScript cannot read is left to the server
      }
    }
    if (schema.format && FORMATS[schema.format] && !FORMATS[schema.format](value)) push(`must be a valid ${schema.format}`);
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) push(`must have at least ${schema.minItems} items`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems) push(`must have at most ${schema.maxItems} items`);
    if (schema.uniqueItems && new Set(value.map((v) => JSON.stringify(v))).size !== value.length) push("must not repeat items");
    if (schema.items && typeof schema.items === "object" && !Array.isArray(schema.items))
      value.forEach((item, i) => validate(schema.items, item, `${path}/${i}`, errors));
  }
  if (kind(value) === "object") {
    for (const key of schema.required || [])
      if (!(key in value)) errors.push({ path: `${path}/${escape(key)}`, message: "is required" });
    const properties = schema.properties || {};
    for (const [key, item] of Object.entries(value)) {
      if (key in properties) validate(properties[key], item, `${path}/${escape(key)}`, errors);
      else if (schema.additionalProperties === false) errors.push({ path: `${path}/${escape(key)}`, message: "is not allowed here" });
      else if (typeof schema.additionalProperties === "object") validate(schema.additionalProperties, item, `${path}/${escape(key)}`, errors);
    }
  }
  for (const sub of schema.allOf || []) validate(sub, value, path, errors);
  const alternatives = schema.anyOf || schema.oneOf;
  if (alternatives) {
    const passing = alternatives.filter((sub) => validate(sub, value, path, []).length === 0).length;
    if (passing === 0) push("matches none of the allowed shapes");
    else if (schema.oneOf && passing > 1) push("matches more than one of the allowed shapes");
  }
  return errors;
}

// The value a form starts with: every default, and the objects that are required.
export function initialValue(schema) {
  if (!schema || typeof schema !== "object") return undefined;
  if (schema.default !== undefined) return structuredClone(schema.default);
  if (schema.properties || schema.type === "object") {
    const out = {};
    const required = new Set(schema.required || []);
    for (const [key, sub] of Object.entries(schema.properties || {})) {
      const isObject = sub && (sub.type === "object" || sub.properties);
      const v = sub?.default !== undefined || (isObject && required.has(key)) ? initialValue(sub) : undefined;
      if (v !== undefined) out[key] = v;
    }
    return out;
  }
  return undefined;
}
