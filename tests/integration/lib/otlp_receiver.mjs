// An OTLP/HTTP trace receiver for tests: a real HTTP server that takes POST /v1/traces in
// protobuf (application/x-protobuf) and JSON (application/json), gzip-compressed or not, decodes every request with
// the OFFICIAL OTLP definitions (the code @opentelemetry/otlp-transformer generates from
// opentelemetry-proto's .proto files, pinned in package.json) and keeps the spans for the
// test to assert. It answers as scripted (status codes in turn, Retry-After, a delay, or
// never), so exporters' retries and a slow or dead collector can be tested too.
//
//   const receiver = await startOtlpReceiver({ statuses: [503, 200], retryAfter: '1' });
//   // OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url (traces go to receiver.url + '/v1/traces')
//   const spans = await receiver.waitForSpans(3);
//   assert.equal(spans[1].parentSpanId, spans[0].spanId);
//   await receiver.close();
//
// A span, as spans() gives it (ids as lowercase hex, '' when absent; times as decimal
// strings; attributes as a plain object, int values as Number, or BigInt past 2^53):
//   { traceId, spanId, parentSpanId, traceState, flags, name, kind, startTimeUnixNano,
//     endTimeUnixNano, attributes, events: [{ name, timeUnixNano, attributes }],
//     status: { code, message }, resource: { ...attributes }, scope: { name, version } }
// A request, as requests() gives it (every one, answered or not):
//   { method, path, contentType, contentEncoding, headers, body (as received), decodedBody,
//     status (0 while unanswered), error (why it was refused as undecodable), canonical
//     (protobuf: the official encoder writes the decoded message with the same bytes), spans }
import http from 'node:http';
import { createRequire } from 'node:module';
import zlib from 'node:zlib';

const require = createRequire(import.meta.url);
// The generated module is not in the package's exports map: loaded by its file path.
const otlp = require('../node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js').opentelemetry.proto;
const { ExportTraceServiceRequest, ExportTraceServiceResponse } = otlp.collector.trace.v1;

const MAX_BODY_BYTES = 64 << 20; // the OTLP specification's recommended limit

const hex = (bytes) => (bytes && bytes.length ? Buffer.from(bytes).toString('hex') : '');

function integer(value) {
  const big = BigInt(typeof value === 'number' ? value : value.toString());
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}

function anyValue(v) {
  if (v == null) return undefined;
  if (v.stringValue != null) return v.stringValue;
  if (v.boolValue != null) return v.boolValue;
  if (v.intValue != null) return integer(v.intValue);
  if (v.doubleValue != null) return v.doubleValue;
  if (v.arrayValue != null) return (v.arrayValue.values || []).map(anyValue);
  if (v.kvlistValue != null) return attributes(v.kvlistValue.values);
  if (v.bytesValue != null) return Buffer.from(v.bytesValue);
  return undefined;
}

function attributes(list) {
  const out = {};
  for (const kv of list || []) out[kv.key] = anyValue(kv.value);
  return out;
}

const nanos = (value) => (value == null ? '0' : BigInt(typeof value === 'number' ? value : value.toString()).toString());

// The spans of a decoded ExportTraceServiceRequest, each with its resource and scope.
export function spansOf(message) {
  const spans = [];
  for (const rs of message.resourceSpans || []) {
    const resource = attributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans || []) {
      const scope = { name: ss.scope?.name || '', version: ss.scope?.version || '' };
      for (const s of ss.spans || []) {
        spans.push({
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          traceState: s.traceState || '',
          flags: s.flags || 0,
          name: s.name || '',
          kind: s.kind || 0,
          startTimeUnixNano: nanos(s.startTimeUnixNano),
          endTimeUnixNano: nanos(s.endTimeUnixNano),
          attributes: attributes(s.attributes),
          events: (s.events || []).map((e) => ({
            name: e.name || '',
            timeUnixNano: nanos(e.timeUnixNano),
            attributes: attributes(e.attributes),
          })),
          status: { code: s.status?.code || 0, message: s.status?.message || '' },
          resource,
          scope,
        });
      }
    }
  }
  return spans;
}

// A protobuf body, decoded with the official definitions. `canonical`: encoding the decoded
// message again with the official encoder gives the same bytes (every field had the number
// and wire type the definitions give it, in their order, and nothing was left over).
export function decodeProtobuf(body) {
  const message = ExportTraceServiceRequest.decode(body);
  const again = Buffer.from(ExportTraceServiceRequest.encode(message).finish());
  return { message, spans: spansOf(message), canonical: again.equals(Buffer.from(body)) };
}

// An OTLP/JSON body: the ids' hex turned into bytes (the OTLP JSON mapping's one departure
// from protobuf's), then read by the official definitions' fromObject. `bytes`: that
// message encoded as protobuf, to compare with what the protobuf encoding of the same spans
// gives.
export function decodeJson(text) {
  const doc = JSON.parse(text);
  const ids = (obj) => {
    for (const key of ['traceId', 'spanId', 'parentSpanId']) {
      if (obj[key] === undefined) continue;
      if (typeof obj[key] !== 'string' || !/^([0-9a-fA-F]{2})*$/.test(obj[key])) {
        throw new Error(`${key} is not hex: ${JSON.stringify(obj[key])}`);
      }
      obj[key] = Buffer.from(obj[key], 'hex');
    }
  };
  for (const rs of doc.resourceSpans || []) {
    for (const ss of rs.scopeSpans || []) for (const s of ss.spans || []) ids(s);
  }
  const message = ExportTraceServiceRequest.fromObject(doc);
  const problem = ExportTraceServiceRequest.verify(message);
  if (problem) throw new Error(problem);
  return { message, spans: spansOf(message), bytes: Buffer.from(ExportTraceServiceRequest.encode(message).finish()) };
}

// Starts the receiver on 127.0.0.1 (a free port).
//   statuses: the status of each request in turn (then 200): e.g. [503, 200], [400]
//   retryAfter: a Retry-After value sent with every answer that is not 200
//   delayMs: wait this long before each answer
//   hang: never answer (the connection stays open until close())
// Only requests answered 200 contribute spans.
export async function startOtlpReceiver({ statuses = [], retryAfter, delayMs = 0, hang = false } = {}) {
  const received = [];
  const accepted = [];
  const waiters = new Set();
  let answered = 0;
  const notify = () => {
    for (const w of waiters) w();
  };
  const server = http.createServer((req, res) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      const encoding = (req.headers['content-encoding'] || '').trim().toLowerCase();
      const contentType = (req.headers['content-type'] || '').split(';')[0].trim().toLowerCase();
      const record = {
        method: req.method,
        path: req.url,
        contentType,
        contentEncoding: encoding,
        headers: req.headers,
        body,
        status: 0,
        error: null,
        canonical: null,
        spans: [],
      };
      received.push(record);
      const answer = (status, payload = '', type = 'text/plain') => {
        record.status = status;
        const headers = { 'content-type': type };
        if (status !== 200 && retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
        res.writeHead(status, headers);
        res.end(payload);
        if (status === 200) accepted.push(...record.spans);
        notify();
      };
      if (req.method !== 'POST' || req.url !== '/v1/traces') return answer(404, 'not an OTLP traces endpoint');
      if (size > MAX_BODY_BYTES) return answer(413, 'too large');
      try {
        if (encoding === 'gzip') body = zlib.gunzipSync(body, { maxOutputLength: MAX_BODY_BYTES });
        else if (encoding !== '' && encoding !== 'identity') return answer(415, `unsupported content encoding ${encoding}`);
        record.decodedBody = body;
        if (contentType === 'application/x-protobuf') {
          const decoded = decodeProtobuf(body);
          record.spans = decoded.spans;
          record.canonical = decoded.canonical;
        } else if (contentType === 'application/json') {
          record.spans = decodeJson(body.toString('utf8')).spans;
        } else {
          return answer(415, `unsupported content type ${contentType}`);
        }
      } catch (error) {
        record.error = String(error?.message || error);
        return answer(400, record.error);
      }
      if (hang) return notify();
      const status = statuses[answered++] ?? 200;
      const reply = () =>
        status !== 200
          ? answer(status, 'scripted failure')
          : contentType === 'application/json'
            ? answer(200, '{}', 'application/json')
            : answer(200, Buffer.from(ExportTraceServiceResponse.encode({}).finish()), 'application/x-protobuf');
      if (delayMs > 0) setTimeout(reply, delayMs);
      else reply();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    tracesUrl: `${url}/v1/traces`,
    spans: () => [...accepted],
    requests: () => [...received],
    // Resolves with the spans once at least `n` were accepted; rejects after `timeoutMs`.
    waitForSpans(n, timeoutMs = 10000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (accepted.length < n) return false;
          clearTimeout(timer);
          waiters.delete(check);
          resolve([...accepted]);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `the OTLP receiver got ${accepted.length} span(s), not ${n}, within ${timeoutMs} ms ` +
                `(${received.length} request(s): ${received.map((r) => r.status || 'unanswered').join(', ')})`,
            ),
          );
        }, timeoutMs);
        if (!check()) waiters.add(check);
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
