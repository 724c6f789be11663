// Traces across hops on the real binaries: an SDK client calls a tool through a gateway
// Toolport whose upstream is another Toolport serving an OpenAPI source against the
// inventory fixture (a web API). Both export to a live OTLP receiver (lib/otlp_receiver.mjs,
// which decodes with the official definitions), and the test asserts the tree:
//   client's traceparent → gateway SERVER span (with its pipeline events) → gateway CLIENT
//   span → upstream SERVER span → upstream CLIENT span to the web API (whose request
//   carries that span's traceparent),
// one trace id throughout. Then sampling (off, ratio 0 under a sampled parent, ratio 0
// without one) and a collector that never answers, which must not hold a call up.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import {
  startHttpServer, sleep, withTimeout, post, initializeSession, freePort, waitFor, LATEST, REDIS, startRedis, stopRedis,
} from './lib/harness.mjs';
import { startOtlpReceiver } from './lib/otlp_receiver.mjs';
import { startInventoryFixture } from '../fixtures/openapi/server.mjs';
import { FAULTY_SERVER } from '../fixtures/upstream/faulty_server.mjs';
import { NODE, yamlString } from './lib/gateway_setup.mjs';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DOCUMENT = path.resolve(HERE, '../fixtures/openapi/inventory.yaml');
const KEY = 'it-trace-key';
const TOKEN = 'it-trace-token';
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE}-${CALLER_SPAN}-01`;

// The OTEL_* variables of this process must not leak into the binaries': each sets its own.
const CLEAN = Object.fromEntries(Object.keys(process.env).filter((k) => k.startsWith('OTEL_')).map((k) => [k, '']));
const exporting = (receiver, service, extra = {}) => ({
  ...CLEAN,
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_SERVICE_NAME: service,
  OTEL_BSP_SCHEDULE_DELAY: '50',
  ...extra,
});

async function connect(server) {
  const client = new Client({ name: 'toolport-it-tracing', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  return client;
}

// Waits until `predicate` holds of the receiver's spans, and returns them.
async function spansWhere(receiver, predicate, what, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const spans = receiver.spans();
    if (predicate(spans)) return spans;
    if (Date.now() > deadline) {
      throw new Error(`${what}: not there after ${timeoutMs} ms; spans: ${JSON.stringify(spans.map((s) => [s.resource['service.name'], s.name, s.spanId, s.parentSpanId]))}`);
    }
    await sleep(50);
  }
}

const KIND_SERVER = 2;
const KIND_CLIENT = 3;

describe('traces across a gateway, an upstream Toolport and a web API', () => {
  let receiver, fixture, upstream, gateway, client;

  before(async () => {
    receiver = await startOtlpReceiver();
    fixture = await startInventoryFixture({ apiKey: KEY, token: TOKEN });
    upstream = await startHttpServer({
      config: ['openapi:', '  inventory:', `    document: ${DOCUMENT}`, `    base_url: ${fixture.url}/v1`, '    tool_prefix: inv_', ''].join('\n'),
      env: { ...exporting(receiver, 'it-upstream'), INVENTORY_API_KEY: KEY, INVENTORY_BEARER: TOKEN },
    });
    gateway = await startHttpServer({
      config: ['upstreams:', '  inner:', `    url: ${upstream.url}`, ''].join('\n'),
      env: exporting(receiver, 'it-gateway'),
      packs: '',
    });
    client = await connect(gateway);
  });
  after(async () => {
    await client?.close();
    await gateway?.stop();
    await upstream?.stop();
    await fixture?.close();
    await receiver?.close();
  });

  it('one trace from the caller to the web API, each hop the child of the one before', async () => {
    // As hosts do: list first, so the SDK checks the result against the tool's outputSchema.
    const { tools } = await client.listTools();
    assert.ok(tools.find((t) => t.name === 'inv_getCategory')?.outputSchema);
    const result = await client.callTool({ name: 'inv_getCategory', arguments: { categoryId: 1 }, _meta: { traceparent: TRACEPARENT } });
    assert.ok(!result.isError, JSON.stringify(result));
    const ofTrace = (spans) => spans.filter((s) => s.traceId === TRACE);
    const spans = ofTrace(
      await spansWhere(receiver, (all) => ofTrace(all).length >= 4 && ofTrace(all).some((s) => s.resource['service.name'] === 'it-upstream' && s.kind === KIND_CLIENT), 'four spans of the trace'),
    );
    const find = (service, kind) => {
      const found = spans.filter((s) => s.resource['service.name'] === service && s.kind === kind);
      assert.equal(found.length, 1, `${service} kind ${kind}: ${JSON.stringify(spans.map((s) => [s.resource['service.name'], s.name, s.kind]))}`);
      return found[0];
    };
    const inbound = find('it-gateway', KIND_SERVER);
    const hop = find('it-gateway', KIND_CLIENT);
    const served = find('it-upstream', KIND_SERVER);
    const api = find('it-upstream', KIND_CLIENT);

    // The tree.
    assert.equal(inbound.parentSpanId, CALLER_SPAN);
    assert.equal(hop.parentSpanId, inbound.spanId);
    assert.equal(served.parentSpanId, hop.spanId);
    assert.equal(api.parentSpanId, served.spanId);

    // The MCP conventions on the inbound span.
    assert.equal(inbound.name, 'tools/call inv_getCategory');
    assert.equal(inbound.attributes['mcp.method.name'], 'tools/call');
    assert.equal(inbound.attributes['gen_ai.tool.name'], 'inv_getCategory');
    assert.equal(inbound.attributes['gen_ai.operation.name'], 'execute_tool');
    assert.equal(inbound.attributes['mcp.protocol.version'], '2025-11-25');
    assert.equal(inbound.attributes['network.transport'], 'tcp');
    assert.match(inbound.attributes['mcp.session.id'], /^[0-9a-f-]{8,}$/);
    assert.ok(inbound.attributes['jsonrpc.request.id'] !== undefined);
    assert.equal(inbound.attributes['error.type'], undefined);
    assert.equal(inbound.scope.name, 'toolport');
    // The pipeline explains itself: the budget scoped to this trace, reserved and settled.
    const events = inbound.events.map((e) => e.name);
    assert.ok(events.includes('budget.reserved') && events.includes('budget.settled'), JSON.stringify(inbound.events));

    // The gateway's hop to its upstream.
    assert.equal(hop.name, 'tools/call inv_getCategory');
    assert.equal(hop.attributes['server.address'], '127.0.0.1');
    assert.equal(hop.attributes['server.port'], upstream.port);
    assert.equal(hop.attributes['toolport.upstream'], 'inner');

    // The upstream's own request to the web API, and the header the API saw.
    assert.equal(served.name, 'tools/call inv_getCategory');
    assert.equal(api.name, 'GET');
    assert.equal(api.attributes['http.request.method'], 'GET');
    assert.equal(api.attributes['server.address'], '127.0.0.1');
    assert.equal(api.attributes['http.response.status_code'], 200);
    assert.match(api.attributes['url.full'], /^http:\/\/127\.0\.0\.1:\d+\/v1\/categories\/1$/);
    const seen = fixture.stats().requests.filter((r) => r.path === '/v1/categories/1');
    assert.ok(seen.length >= 1);
    assert.equal(seen.at(-1).headers.traceparent, `00-${TRACE}-${api.spanId}-01`);
  });

  it('a failing call marks its spans with the error type', async () => {
    const result = await client.callTool({ name: 'inv_getCategory', arguments: {}, _meta: { traceparent: `00-${'a'.repeat(32)}-${CALLER_SPAN}-01` } });
    assert.ok(result.isError);
    const spans = await spansWhere(receiver, (all) => all.some((s) => s.traceId === 'a'.repeat(32) && s.kind === KIND_SERVER), 'the failed call');
    const inbound = spans.find((s) => s.traceId === 'a'.repeat(32) && s.kind === KIND_SERVER);
    assert.equal(inbound.attributes['error.type'], 'tool_error');
    assert.equal(inbound.status.code, 2);
    assert.ok(inbound.events.some((e) => e.name === 'validation.failed'), JSON.stringify(inbound.events));
  });
});

describe('sampling and a collector that never answers', () => {
  it('samples as told: off, a ratio of 0 under a sampled parent (followed) and without one (not sampled)', async (t) => {
    const receiver = await startOtlpReceiver();
    t.after(() => receiver.close());
    const off = await startHttpServer({ env: exporting(receiver, 'it-off', { OTEL_TRACES_SAMPLER: 'always_off' }) });
    t.after(() => off.stop());
    const ratio = await startHttpServer({ env: exporting(receiver, 'it-ratio', { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }) });
    t.after(() => ratio.stop());
    for (const server of [off, ratio]) {
      const c = await connect(server);
      await c.callTool({ name: 'test_simple_text', arguments: {}, _meta: { traceparent: TRACEPARENT } });
      await c.callTool({ name: 'test_simple_text', arguments: {} });
      await c.close();
    }
    const spans = await spansWhere(receiver, (all) => all.some((s) => s.resource['service.name'] === 'it-ratio' && s.name === 'tools/call test_simple_text'), 'the parent-sampled call');
    await sleep(300); // whatever else was coming has come (the exporters send every 50 ms)
    const calls = receiver.spans().filter((s) => s.name === 'tools/call test_simple_text');
    assert.deepEqual(calls.map((s) => [s.resource['service.name'], s.traceId]), [['it-ratio', TRACE]], JSON.stringify(spans.map((s) => s.name)));
  });

  it('a collector that never answers holds no call up, and the server still stops', async (t) => {
    const receiver = await startOtlpReceiver({ hang: true });
    t.after(() => receiver.close());
    const server = await startHttpServer({ env: exporting(receiver, 'it-hang', { OTEL_BSP_MAX_QUEUE_SIZE: '8', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '4' }) });
    const c = await connect(server);
    await withTimeout(
      (async () => {
        for (let i = 0; i < 40; i++) {
          const r = await c.callTool({ name: 'test_simple_text', arguments: {} });
          assert.ok(!r.isError);
        }
      })(),
      20000,
      '40 calls with a collector that never answers',
    );
    await c.close();
    await withTimeout(server.stop(), 15000, 'stopping with a collector that never answers');
  });
});

describe('an upstream\'s request to the client, relayed by the gateway', () => {
  it('is an event on the call\'s span, and so is the client\'s refusal', async (t) => {
    const receiver = await startOtlpReceiver();
    t.after(() => receiver.close());
    const gateway = await startHttpServer({
      packs: '',
      env: exporting(receiver, 'it-relay'),
      config: `upstreams:\n  faulty:\n    command: ${yamlString(NODE)}\n    args: [${yamlString(FAULTY_SERVER)}, stdio]\n`,
    });
    t.after(() => gateway.stop());
    const client = new Client({ name: 'toolport-it-tracing', version: '1.0.0' }, { capabilities: { sampling: {} } });
    let refuse = false;
    client.setRequestHandler(CreateMessageRequestSchema, async () => {
      if (refuse) throw new Error('the user said no');
      return { role: 'assistant', content: { type: 'text', text: 'ok' }, model: 'm' };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)));
    t.after(() => client.close());
    await waitFor('the upstream listed', async () => (await client.listTools()).tools.some((x) => x.name === 'ask_sampling'));
    await client.callTool({ name: 'ask_sampling', arguments: { prompt: 'hi' }, _meta: { traceparent: TRACEPARENT } });
    refuse = true;
    await client.callTool({ name: 'ask_sampling', arguments: { prompt: 'no' } });
    const spans = await spansWhere(receiver, (all) => all.filter((s) => s.name === 'tools/call ask_sampling' && s.kind === KIND_SERVER).length >= 2, 'both calls');
    const calls = spans.filter((s) => s.name === 'tools/call ask_sampling' && s.kind === KIND_SERVER);
    const answered = calls.find((s) => s.traceId === TRACE);
    const refused = calls.find((s) => s.traceId !== TRACE);
    const relayed = answered.events.find((e) => e.name === 'mcp.upstream_request.relayed');
    assert.ok(relayed, JSON.stringify(answered.events));
    assert.equal(relayed.attributes['mcp.method.name'], 'sampling/createMessage');
    assert.equal(relayed.attributes['toolport.upstream'], 'faulty');
    assert.ok(!answered.events.some((e) => e.name === 'mcp.upstream_request.error'));
    const error = refused.events.find((e) => e.name === 'mcp.upstream_request.error');
    assert.ok(error, JSON.stringify(refused.events));
    assert.equal(error.attributes['mcp.method.name'], 'sampling/createMessage');
    assert.match(error.attributes['error.type'], /^-?\d+$/);
  });
});

describe('metrics link to traces', () => {
  it('/metrics in OpenMetrics carries the traced call as an exemplar of its duration bucket; the 0.0.4 text does not', async (t) => {
    const receiver = await startOtlpReceiver();
    t.after(() => receiver.close());
    const server = await startHttpServer({ env: exporting(receiver, 'it-exemplar') });
    t.after(() => server.stop());
    const c = await connect(server);
    await c.callTool({ name: 'test_simple_text', arguments: {}, _meta: { traceparent: TRACEPARENT } });
    await c.close();
    const metricsUrl = server.url.replace(/\/mcp$/, '/metrics');
    const open = await fetch(metricsUrl, { headers: { Accept: 'application/openmetrics-text; version=1.0.0, text/plain;q=0.5' } });
    assert.equal(open.status, 200);
    assert.match(open.headers.get('content-type'), /^application\/openmetrics-text; version=1\.0\.0/);
    const text = await open.text();
    assert.match(text, /# EOF\n$/);
    const line = text.split('\n').find((l) => l.startsWith('mcp_server_operation_duration_seconds_bucket{') &&
      l.includes('gen_ai_tool_name="test_simple_text"') && l.includes(' # {'));
    assert.ok(line, `no exemplar on the call's duration buckets:\n${text.split('\n').filter((l) => l.startsWith('mcp_server_operation')).join('\n')}`);
    assert.match(line, new RegExp(`# \\{trace_id="${TRACE}",span_id="[0-9a-f]{16}"\\} [0-9.e-]+ [0-9]+\\.[0-9]{3}$`), line);
    const plain = await (await fetch(metricsUrl)).text();
    assert.doesNotMatch(plain, /trace_id=/);
    assert.doesNotMatch(plain, /# EOF/);
  });
});

describe('a session shared by two replicas keeps the caller\'s trace', { skip: !REDIS && 'redis-server is not installed' }, () => {
  it('a call sent to the other replica, with the trace in HTTP headers, is a span of that trace', async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-trace-shared-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const redisPort = await freePort();
    const redis = await startRedis(redisPort, dir);
    t.after(() => stopRedis(redis));
    const receiver = await startOtlpReceiver();
    t.after(() => receiver.close());
    const config = `store:\n  url: redis://127.0.0.1:${redisPort}\nsessions: shared\n`;
    const a = await startHttpServer({ config, env: exporting(receiver, 'it-replica-a') });
    t.after(() => a.stop());
    const b = await startHttpServer({ config, env: exporting(receiver, 'it-replica-b') });
    t.after(() => b.stop());
    for (const s of [a, b]) {
      await waitFor('the replica to reach Redis', async () => (await (await fetch(`${s.base}/health`)).json()).status === 'healthy');
    }
    const { sessionId } = await initializeSession(a);
    const trace = 'b'.repeat(32);
    const res = await post(b, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } }, {
      sessionId,
      protocolVersion: LATEST,
      headers: { traceparent: `00-${trace}-${CALLER_SPAN}-01`, tracestate: 'vendor=1', baggage: 'tenant=acme' },
    });
    assert.equal(res.status, 200, res.text);
    const spans = await spansWhere(receiver, (all) => all.some((s) => s.traceId === trace), 'the relayed call\'s span');
    const span = spans.find((s) => s.traceId === trace);
    assert.equal(span.kind, KIND_SERVER);
    assert.equal(span.name, 'tools/call test_simple_text');
    assert.equal(span.parentSpanId, CALLER_SPAN);
    assert.equal(span.traceState, 'vendor=1');
    assert.equal(span.attributes['mcp.session.id'], sessionId);
  });
});
