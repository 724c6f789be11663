// Observability of the real binary: GET /metrics (Prometheus text format) and GET /health on
// the Streamable HTTP listener, their access rules (bearer token, Host and Origin checks,
// configuration switches), and the structured JSON log lines on stderr or in a log file.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpServer, serverForTest, assertAlive, request, httpRequest, sleep } from './lib/harness.mjs';

// The value of one sample in a Prometheus text body, or undefined. `labels` must be given
// in the order the server renders them (sorted by name).
function sample(text, name, labels = {}) {
  const rendered = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',');
  const key = rendered ? `${name}{${rendered}} ` : `${name} `;
  const line = text.split('\n').find((l) => l.startsWith(key));
  return line === undefined ? undefined : Number(line.slice(key.length));
}

async function getMetrics(server, headers = {}) {
  const res = await request(server, 'GET', { path: '/metrics', headers });
  return res;
}

async function connectClient(server, headers) {
  const client = new Client({ name: 'toolport-it-observability', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(
    new URL(server.url),
    headers ? { requestInit: { headers } } : undefined,
  );
  await client.connect(transport);
  return { client, transport };
}

describe('GET /metrics and GET /health', () => {
  let server;
  let client;
  let transport;

  before(async () => {
    server = await startHttpServer();
    ({ client, transport } = await connectClient(server));
    const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
    assert.equal(result.content[0].text, 'This is a simple text response for testing.');
  });

  after(async () => {
    await client?.close().catch(() => {});
    await server?.stop();
  });

  it('serves the metrics in the Prometheus text format 0.0.4', async () => {
    const res = await getMetrics(server);
    assert.equal(res.status, 200, res.text);
    const type = res.headers.get('content-type');
    assert.match(type, /^text\/plain/);
    assert.match(type, /version=0\.0\.4/);
    assert.match(res.text, /^# HELP toolport_http_requests_total .+$/m);
    assert.match(res.text, /^# TYPE toolport_http_requests_total counter$/m);
    assert.match(res.text, /^# TYPE toolport_sessions_open gauge$/m);
    // Every line is a comment or a sample: name{labels} value.
    for (const line of res.text.trimEnd().split('\n')) {
      assert.match(line, /^(# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .*|[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})? \S+)$/, line);
    }
    assert.ok(res.text.endsWith('\n'));
  });

  it('counts the HTTP requests of the SDK client by method and status', async () => {
    const res = await getMetrics(server);
    // initialize, notifications/initialized (202), tools/call: at least two POSTs answered 200.
    const posts = sample(res.text, 'toolport_http_requests_total', { method: 'POST', status: '200' });
    assert.ok(posts >= 2, `POST 200 count: ${posts}\n${res.text}`);
    const accepted = sample(res.text, 'toolport_http_requests_total', { method: 'POST', status: '202' });
    assert.ok(accepted >= 1, `POST 202 count: ${accepted}\n${res.text}`);
    assert.equal(sample(res.text, 'toolport_sessions_open'), 1, res.text);
  });

  it('counts on: another tool call and another scrape show up', async () => {
    const before = (await getMetrics(server)).text;
    await client.callTool({ name: 'test_simple_text', arguments: {} });
    const after = (await getMetrics(server)).text;
    const count = (text, labels) => sample(text, 'toolport_http_requests_total', labels) ?? 0;
    assert.equal(count(after, { method: 'GET', status: '200' }), count(before, { method: 'GET', status: '200' }) + 1);
    assert.equal(count(after, { method: 'POST', status: '200' }), count(before, { method: 'POST', status: '200' }) + 1);
  });

  it('counts error statuses too (404 for an unknown path)', async () => {
    const before = sample((await getMetrics(server)).text, 'toolport_http_requests_total', { method: 'GET', status: '404' }) ?? 0;
    const missing = await request(server, 'GET', { path: '/nowhere' });
    assert.equal(missing.status, 404);
    const after = sample((await getMetrics(server)).text, 'toolport_http_requests_total', { method: 'GET', status: '404' });
    assert.equal(after, before + 1);
  });

  it('serves the health report as JSON', async () => {
    const res = await request(server, 'GET', { path: '/health' });
    assert.equal(res.status, 200, res.text);
    assert.match(res.headers.get('content-type'), /^application\/json/);
    const report = res.json;
    assert.equal(report.status, 'healthy');
    assert.match(report.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    assert.ok(Math.abs(Date.parse(report.timestamp) - Date.now()) < 60000, report.timestamp);
    assert.match(report.version, /^\d+\.\d+\.\d+/);
    assert.equal(typeof report.uptime_s, 'number');
    assert.ok(report.uptime_s >= 0);
    // The pins (on by default, warn) are a component: where they are kept.
    assert.deepEqual(report.services, { server: 'available', store: 'available', pins: 'file' });
  });

  it('answers only GET on /metrics and /health', async () => {
    for (const p of ['/metrics', '/health']) {
      const res = await request(server, 'POST', { path: p });
      assert.equal(res.status, 405, `${p}: ${res.text}`);
      assert.equal(res.headers.get('allow'), 'GET');
    }
  });

  it('keeps the Host and Origin checks on both endpoints', async () => {
    for (const p of ['/metrics', '/health']) {
      const host = await httpRequest(server.port, { method: 'GET', path: p, headers: { Host: 'evil.example' } });
      assert.equal(host.status, 403, `${p} with a foreign Host: ${host.text}`);
      const origin = await request(server, 'GET', { path: p, headers: { Origin: 'http://evil.example' } });
      assert.equal(origin.status, 403, `${p} with a foreign Origin: ${origin.text}`);
    }
  });

  it('shows the session closed after the client ends it', async () => {
    await transport.terminateSession();
    const res = await getMetrics(server);
    assert.equal(sample(res.text, 'toolport_sessions_open'), 0, res.text);
  });

  it('logs one JSON object per line on stderr by default', () => {
    const lines = server.logs().split('\n').filter((l) => l.length > 0);
    assert.ok(lines.length > 0, 'some log lines');
    for (const line of lines) {
      const entry = JSON.parse(line);
      assert.match(entry.ts, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, line);
      assert.ok(['trace', 'debug', 'info', 'warn', 'error', 'critical'].includes(entry.level), line);
      assert.equal(typeof (entry.msg ?? entry.event), 'string', line);
    }
    assert.ok(lines.some((l) => /serving MCP on http/.test(JSON.parse(l).msg ?? '')), server.logs());
  });

  it('is still alive', () => assertAlive(server));
});

describe('observability with bearer auth on', () => {
  const CONFIG = 'http:\n  bearer_tokens_env: TP_TOKENS\n';
  const auth = { Authorization: 'Bearer secret1' };
  let server;

  before(async () => {
    server = await startHttpServer({ config: CONFIG, env: { TP_TOKENS: 'secret1' } });
  });

  after(async () => {
    await server?.stop();
  });

  it('/metrics needs the token: 401 without it, 200 with it', async () => {
    const denied = await getMetrics(server);
    assert.equal(denied.status, 401, denied.text);
    assert.match(denied.headers.get('www-authenticate') ?? '', /^Bearer/);
    assert.doesNotMatch(denied.text, /toolport_http_requests_total/);
    const wrong = await getMetrics(server, { Authorization: 'Bearer nope' });
    assert.equal(wrong.status, 401, wrong.text);
    const allowed = await getMetrics(server, auth);
    assert.equal(allowed.status, 200, allowed.text);
    // The refusals above were counted.
    assert.ok(sample(allowed.text, 'toolport_http_requests_total', { method: 'GET', status: '401' }) >= 2, allowed.text);
  });

  it('/health is public by default (http.public_health: true)', async () => {
    const res = await request(server, 'GET', { path: '/health' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.status, 'healthy');
  });

  it('the MCP endpoint still needs the token', async () => {
    const res = await request(server, 'GET', { headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': 'x' } });
    assert.equal(res.status, 401, res.text);
  });

  it('an authenticated SDK client is counted', async () => {
    const { client } = await connectClient(server, auth);
    try {
      await client.callTool({ name: 'test_simple_text', arguments: {} });
      const res = await getMetrics(server, auth);
      assert.ok(sample(res.text, 'toolport_http_requests_total', { method: 'POST', status: '200' }) >= 2, res.text);
    } finally {
      await client.close().catch(() => {});
    }
  });
});

describe('observability configuration', () => {
  it('http.public_health: false puts /health behind the token', async (t) => {
    const server = await serverForTest(t, {
      config: 'http:\n  bearer_tokens_env: TP_TOKENS\n  public_health: false\n',
      env: { TP_TOKENS: 'secret1' },
    });
    const denied = await request(server, 'GET', { path: '/health' });
    assert.equal(denied.status, 401, denied.text);
    const allowed = await request(server, 'GET', { path: '/health', headers: { Authorization: 'Bearer secret1' } });
    assert.equal(allowed.status, 200, allowed.text);
    assert.equal(allowed.json.status, 'healthy');
  });

  it('http.metrics_endpoint / http.health_endpoint: false turn the endpoints off', async (t) => {
    const server = await serverForTest(t, { config: 'http:\n  metrics_endpoint: false\n  health_endpoint: false\n' });
    for (const p of ['/metrics', '/health']) {
      const res = await request(server, 'GET', { path: p });
      assert.equal(res.status, 404, `${p}: ${res.text}`);
    }
  });

  it('log.file receives the JSON lines, log.format: text keeps the human format', async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-it-log-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'toolport.log');
    const server = await serverForTest(t, { config: `log:\n  file: ${file}\n  format: json\n` });
    let text = '';
    for (let i = 0; i < 100 && !/serving MCP/.test(text); i++) {
      await sleep(20);
      text = existsSync(file) ? readFileSync(file, 'utf8') : '';
    }
    const lines = text.split('\n').filter((l) => l.length > 0);
    assert.ok(lines.some((l) => /serving MCP on http/.test(JSON.parse(l).msg)), text);
    assert.doesNotMatch(server.logs(), /serving MCP/, 'nothing on stderr when logging to a file');

    const textServer = await serverForTest(t, { config: 'log:\n  format: text\n' });
    for (let i = 0; i < 100 && !/serving MCP/.test(textServer.logs()); i++) await sleep(20);
    assert.match(textServer.logs(), /^\[\d{4}-\d{2}-\d{2} [\d:.]+\] \[toolport\] \[info\] serving MCP on http/m);
  });

  it('refuses to start with a bad log.format, naming the key', async () => {
    await assert.rejects(startHttpServer({ config: 'log:\n  format: xml\n' }), /log\.format: must be json or text/);
  });
});
