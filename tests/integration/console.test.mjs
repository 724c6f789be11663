// The operator console's JSON API on the real binary (docs/console.md): who may use it
// (loopback without auth, the server's own bearer tokens, OAuth tokens with the operator
// scope), the header fields of every answer, and bad input (unknown paths, wrong methods).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { serverForTest, startHttpServer, waitFor } from './lib/harness.mjs';
import { startAuthServer, makeKey } from './lib/auth_server.mjs';
import { startCatalogFixture } from '../fixtures/agentpmt/server.mjs';
import { startConsoleUpstream } from './lib/console_upstream.mjs';

const TOKEN = 'console-operator-token-5f2a91';
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const bearer = (token) => ({ Authorization: `Bearer ${token}` });

function assertConsoleHeaders(res, what) {
  assert.equal(res.headers.get('content-security-policy'), CSP, what);
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff', what);
  assert.equal(res.headers.get('referrer-policy'), 'no-referrer', what);
}

async function assertError(res, status, code, what) {
  const text = await res.text();
  assert.equal(res.status, status, `${what}: ${text}`);
  assert.equal(res.headers.get('content-type'), 'application/json', what);
  assertConsoleHeaders(res, what);
  const body = JSON.parse(text);
  assert.equal(body.error.code, code, what);
  assert.ok(body.error.message && body.error.suggestion, what);
  return body;
}

describe('console API: access', () => {
  it('without auth on loopback: served, the caller is nobody in particular', async (t) => {
    const server = await serverForTest(t);
    const res = await fetch(`${server.base}/console/api/me`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assertConsoleHeaders(res, 'me');
    assert.deepEqual(await res.json(), { principal: '', scopes: [], auth: 'none', trace_viewer_url: '' });
    // Host and Origin as for /mcp.
    await assertRpc403(await fetch(`${server.base}/console/api/me`, { headers: { Origin: 'https://evil.example' } }));
  });

  it('with bearer tokens: the server\'s own token is an operator; none or another is 401', async (t) => {
    const server = await serverForTest(t, {
      config: 'http:\n  bearer_tokens_env: CONSOLE_TOKENS\nconsole:\n  trace_viewer_url: https://traces.example/{trace_id}\n',
      env: { CONSOLE_TOKENS: TOKEN },
    });
    const anonymous = await fetch(`${server.base}/console/api/me`);
    await assertError(anonymous, 401, 'unauthorized', 'no token');
    assert.equal(anonymous.headers.get('www-authenticate'), 'Bearer realm="toolport"');
    const wrong = await fetch(`${server.base}/console/api/me`, { headers: bearer('not-the-token') });
    await assertError(wrong, 401, 'unauthorized', 'wrong token');
    assert.match(wrong.headers.get('www-authenticate'), /invalid_token/);
    const me = await fetch(`${server.base}/console/api/me`, { headers: bearer(TOKEN) });
    assert.equal(me.status, 200);
    const body = await me.json();
    assert.equal(body.auth, 'bearer');
    assert.match(body.principal, /^bearer:[0-9a-f]+$/);
    assert.ok(!JSON.stringify(body).includes(TOKEN), 'never the token');
    assert.equal(body.trace_viewer_url, 'https://traces.example/{trace_id}');
    // The page's files need no credential (the page asks for one).
    const page = await fetch(`${server.base}/console/`);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assertConsoleHeaders(page, 'page');
  });

  it('bad input: unknown API paths 404, wrong methods 405, each a JSON error', async (t) => {
    const server = await serverForTest(t);
    const unknown = await assertError(await fetch(`${server.base}/console/api/mee`), 404, 'not_found', 'typo');
    assert.match(unknown.error.suggestion, /api\/me/);
    await assertError(await fetch(`${server.base}/console/api/`), 404, 'not_found', 'api/');
    const wrong = await fetch(`${server.base}/console/api/me`, { method: 'DELETE' });
    await assertError(wrong, 405, 'method_not_allowed', 'DELETE me');
    assert.equal(wrong.headers.get('allow'), 'GET');
    await assertError(await fetch(`${server.base}/console/`, { method: 'PUT', body: 'x' }), 405, 'method_not_allowed', 'PUT page');
  });

  it('console.enabled: false and console.path move or remove it', async (t) => {
    const off = await serverForTest(t, { config: 'console:\n  enabled: false\n' });
    assert.equal((await fetch(`${off.base}/console/api/me`)).status, 404);
    const moved = await serverForTest(t, { config: 'console:\n  path: /ops\n' });
    assert.equal((await fetch(`${moved.base}/ops/api/me`)).status, 200);
    assert.equal((await fetch(`${moved.base}/console/api/me`)).status, 404);
  });
});

async function assertRpc403(res) {
  assert.equal(res.status, 403);
  assert.match((await res.json()).error.message, /Origin/);
}

describe('console API: OAuth', () => {
  const env = {};
  before(async () => {
    env.as = await startAuthServer();
    env.as.keys = [makeKey('ec', 'key-1')];
    env.server = await startHttpServer({
      env: { CONSOLE_TOKENS: TOKEN },
      config: ['http:', '  bearer_tokens_env: CONSOLE_TOKENS', 'auth:', `  issuer: ${env.as.issuer}`, '  allow_http: true',
        '  required_scopes: [mcp:tools]', ''].join('\n'),
    });
    env.resource = `http://127.0.0.1:${env.server.port}/mcp`;
  });
  after(async () => {
    await env.server?.stop();
    await env.as?.stop();
  });

  it('a token without the operator scope is 403 insufficient_scope; with it, served', async () => {
    const { as, server, resource } = env;
    const user = as.token({ sub: 'alice', aud: resource, scope: 'mcp:tools' });
    const refused = await fetch(`${server.base}/console/api/me`, { headers: bearer(user) });
    const body = await assertError(refused, 403, 'insufficient_scope', 'end user');
    assert.match(body.error.message, /toolport:operator/);
    assert.match(refused.headers.get('www-authenticate'), /^Bearer error="insufficient_scope", /);
    assert.match(refused.headers.get('www-authenticate'), /scope="mcp:tools toolport:operator"/);
    assert.ok(!JSON.stringify(body).includes(user.slice(0, 20)), 'never the token');

    const operator = as.token({ sub: 'olga', aud: resource, scope: 'mcp:tools toolport:operator' });
    const me = await fetch(`${server.base}/console/api/me`, { headers: bearer(operator) });
    assert.equal(me.status, 200);
    const who = await me.json();
    assert.equal(who.auth, 'oauth');
    assert.match(who.principal, /^oauth:/);
    assert.deepEqual(who.scopes.sort(), ['mcp:tools', 'toolport:operator']);

    const forged = as.token({ sub: 'olga', aud: 'https://elsewhere.example/mcp', scope: 'toolport:operator' });
    const bad = await fetch(`${server.base}/console/api/me`, { headers: bearer(forged) });
    await assertError(bad, 401, 'unauthorized', 'wrong audience');
    assert.match(bad.headers.get('www-authenticate'), /invalid_token/);
    // The server's own token is an operator here too.
    assert.equal((await fetch(`${server.base}/console/api/me`, { headers: bearer(TOKEN) })).status, 200);
  });
});

// The events of an SSE response read with fetch, as the page reads them: {event, data}
// with data parsed (blocks without a name or data are passed over).
async function* sseEvents(res) {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event && data) yield { event, data: JSON.parse(data) };
    }
  }
}

// Reads a console SSE stream with fetch, as the page does; resolves with the first `count`
// events of type `type` (each parsed), then stops reading.
async function readEvents(url, type, count, { headers = {}, timeoutMs = 10000, onOpen } = {}) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const res = await fetch(url, { headers, signal: controller.signal });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  assertConsoleHeaders(res, 'stream');
  const events = [];
  try {
    if (onOpen) await onOpen();
    for await (const { event, data } of sseEvents(res)) {
      if (event === type) events.push({ at: Date.now(), data });
      if (events.length >= count) break;
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return events;
}

async function connectClient(t, server, headers = {}) {
  const client = new Client({ name: 'console-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers } }));
  t.after(() => client.close());
  return client;
}

const sum = (a) => a.reduce((x, y) => x + y, 0);

describe('console API: overview', () => {
  it('counts calls and errors per source over the last hour, with totals and the last error', async (t) => {
    const server = await serverForTest(t);
    const client = await connectClient(t, server);
    for (let i = 0; i < 3; i++) await client.callTool({ name: 'greet', arguments: { name: `n${i}` } });
    const failed = await client.callTool({ name: 'test_error_handling', arguments: {} });
    assert.equal(failed.isError, true);
    const res = await fetch(`${server.base}/console/api/overview`);
    assert.equal(res.status, 200);
    const overview = await res.json();
    assert.equal(overview.server.name, 'toolport');
    assert.equal(overview.server.transport, 'http');
    assert.ok(overview.server.version);
    assert.equal(overview.server.replicas.length, 1);
    const source = overview.sources.find((s) => s.name === 'conformance');
    assert.ok(source, JSON.stringify(overview.sources.map((s) => s.name)));
    assert.equal(source.kind, 'pack');
    assert.equal(source.state, 'healthy');
    assert.ok(source.tools > 5);
    assert.equal(source.series.step_s, 10);
    for (const k of ['calls', 'errors', 'p50_ms', 'p99_ms']) assert.equal(source.series[k].length, 360, k);
    assert.equal(sum(source.series.calls), 4);
    assert.equal(sum(source.series.errors), 1);
    assert.ok(Math.abs(source.series.end - Date.now() / 1000) <= 11, `${source.series.end}`);
    assert.ok(source.calls_per_s > 0);
    assert.equal(source.error_rate, 0.25);
    assert.ok(source.p50_ms > 0 && source.p99_ms >= source.p50_ms);
    assert.match(source.last_error.message, /test_error_handling/);
    assert.ok(Math.abs(source.last_error.at - Date.now() / 1000) < 60);
    assert.equal(sum(overview.totals.series.calls), 4);
    assert.equal(overview.totals.error_rate, 0.25);
    assert.equal(overview.budgets, null);
    assert.deepEqual(overview.rate_limits, []);
  });

  it('overview/stream: an overview at once, then again every 2 s, with the calls made meanwhile', async (t) => {
    const server = await serverForTest(t);
    const client = await connectClient(t, server);
    const started = Date.now();
    const events = await readEvents(`${server.base}/console/api/overview/stream`, 'overview', 2, {
      onOpen: () => client.callTool({ name: 'greet', arguments: { name: 'x' } }),
    });
    assert.equal(events.length, 2);
    assert.ok(events[0].at - started < 1500, 'the first at once');
    const second = events[1].data.sources.find((s) => s.name === 'conformance');
    assert.equal(sum(second.series.calls), 1);
    assert.ok(events[1].at - events[0].at >= 1500, 'the next after the interval');
  });

  it('budget pressure: the highest share of a budget a request reserved, and the calls refused', async (t) => {
    const upstream = await startHttpServer();
    t.after(() => upstream.stop().catch(() => {}));
    // A call to an upstream counts 12 (it reports nothing): a session may cause 20 in all,
    // and through `tight` 5, so a call there is refused.
    const server = await serverForTest(t, {
      packs: '',
      config:
        `upstreams:\n  remote:\n    url: ${upstream.url}\n  tight:\n    url: ${upstream.url}\n` +
        'pipeline:\n  budget:\n    max_downstream_calls_per_request: 20\n' +
        'sources:\n  tight:\n    budget:\n      max_downstream_calls_per_request: 5\n',
    });
    const overview = async () => (await fetch(`${server.base}/console/api/overview`)).json();
    await waitFor('the upstreams connected', async () =>
      (await overview()).sources.filter((s) => s.state === 'healthy').length === 2);
    assert.equal((await overview()).budgets, null, 'no budget kept yet');
    const { tools } = await (await fetch(`${server.base}/console/api/tools`)).json();
    const greetOf = (source) => tools.find((tool) => tool.source === source && /greet/.test(tool.name)).name;
    const client = await connectClient(t, server);
    const allowed = await client.callTool({ name: greetOf('remote'), arguments: { name: 'x' } });
    assert.ok(!allowed.isError, JSON.stringify(allowed));
    assert.deepEqual((await overview()).budgets, { peak: 0.6, refused_last_hour: 0 });
    const refused = await client.callTool({ name: greetOf('tight'), arguments: { name: 'y' } });
    assert.equal(refused.structuredContent?.error_code, 'MCP_BUDGET_EXCEEDED', JSON.stringify(refused));
    // A refused call needed more than all of its budget.
    assert.deepEqual((await overview()).budgets, { peak: 1, refused_last_hour: 1 });
  });

  it('an upstream that goes away turns down, with its breaker open', async (t) => {
    const upstream = await startHttpServer();
    t.after(() => upstream.stop().catch(() => {}));
    const server = await serverForTest(t, {
      packs: '',
      config: `upstreams:\n  remote:\n    url: ${upstream.url}\nservices:\n  remote: {breaker: {failure_threshold: 1, cooldown_s: 60}}\n`,
    });
    const stateOf = async () => (await (await fetch(`${server.base}/console/api/overview`)).json()).sources.find((s) => s.name === 'remote');
    const up = await waitFor('the upstream connected', async () => ((await stateOf())?.state === 'healthy' ? stateOf() : null));
    assert.equal(up.kind, 'upstream');
    assert.ok(up.tools > 5);
    const client = await connectClient(t, server);
    const greet = (await client.listTools()).tools.find((tool) => /greet/.test(tool.name));
    assert.ok(greet, 'the upstream lists greet');
    await upstream.stop();
    // The gateway learns it is gone when it next calls it.
    await client.callTool({ name: greet.name, arguments: { name: 'x' } }).catch(() => {});
    const down = await waitFor('the upstream down', async () => {
      const s = await stateOf();
      return s?.state === 'down' ? s : null;
    });
    assert.ok(['open', 'closed', 'half_open'].includes(down.breaker), down.breaker);
    assert.ok(down.last_error, 'the failed call is its last error');
  });
});

describe('console API: tools', () => {
  it('lists the catalog with schemas and counts, ranks a query by BM25, filters by source', async (t) => {
    const server = await serverForTest(t);
    const client = await connectClient(t, server);
    await client.callTool({ name: 'greet', arguments: { name: 'a' } });
    await client.callTool({ name: 'greet', arguments: { name: 'b' } });
    const all = await (await fetch(`${server.base}/console/api/tools`)).json();
    const listed = (await client.listTools()).tools;
    assert.deepEqual(all.tools.map((t) => t.name).sort(), listed.map((t) => t.name).sort());
    assert.deepEqual(all.sources, ['conformance']);
    assert.deepEqual(all.profiles, []);
    const greet = all.tools.find((t) => t.name === 'greet');
    const sdkGreet = listed.find((t) => t.name === 'greet');
    assert.deepEqual(greet.inputSchema, sdkGreet.inputSchema);
    assert.equal(greet.source, 'conformance');
    assert.equal(greet.description, sdkGreet.description);
    assert.equal(greet.calls, 2);
    assert.equal(greet.errors, 0);
    assert.ok(greet.p50_ms > 0);
    assert.deepEqual(greet.scopes, []);
    assert.ok(['forbidden', 'optional', 'required'].includes(greet.task_support));
    assert.ok(all.tools.some((t) => t.task_support !== 'forbidden'), 'the conformance pack has task tools');
    const untouched = all.tools.find((t) => t.name !== 'greet');
    assert.equal(untouched.calls, 0);
    assert.equal(untouched.p50_ms, null);

    const ranked = await (await fetch(`${server.base}/console/api/tools?q=${encodeURIComponent('greet')}`)).json();
    assert.ok(ranked.tools.length >= 1);
    assert.equal(ranked.tools[0].name, 'greet');
    const none = await (await fetch(`${server.base}/console/api/tools?q=zzzunmatchedword`)).json();
    assert.deepEqual(none.tools, []);
    const punct = await (await fetch(`${server.base}/console/api/tools?q=${encodeURIComponent('  ')}`)).json();
    assert.equal(punct.tools.length, all.tools.length, 'no words: every tool');
    const bySource = await (await fetch(`${server.base}/console/api/tools?source=elsewhere`)).json();
    assert.deepEqual(bySource.tools, []);
  });

  it('refuses an unknown parameter, a bad encoding and an unknown profile with a JSON error', async (t) => {
    const server = await serverForTest(t);
    const unknown = await assertError(await fetch(`${server.base}/console/api/tools?qq=x`), 400, 'bad_request', 'qq');
    assert.match(unknown.error.suggestion, /q, profile, source/);
    await assertError(await fetch(`${server.base}/console/api/tools?q=%zz`), 400, 'bad_request', 'encoding');
    await assertError(await fetch(`${server.base}/console/api/tools?profile=nobody`), 404, 'not_found', 'profile');
    await assertError(await fetch(`${server.base}/console/api/tools`, { method: 'POST', body: '{}' }), 405, 'method_not_allowed', 'POST');
  });
});

describe('console API: tools of a gateway', () => {
  it('lists gateway profiles with their tools, and filters by one', async (t) => {
    const upstream = await startHttpServer();
    t.after(() => upstream.stop().catch(() => {}));
    const server = await serverForTest(t, {
      packs: '',
      config: `upstreams:\n  remote:\n    url: ${upstream.url}\ngateway:\n  profiles:\n    small: {tools: ["greet"]}\n`,
    });
    const all = await waitFor('the upstream tools', async () => {
      const body = await (await fetch(`${server.base}/console/api/tools`)).json();
      return body.tools.length > 5 ? body : null;
    });
    assert.deepEqual(all.sources, ['remote']);
    assert.deepEqual(all.profiles, [{ name: 'small', tools: ['greet'] }]);
    const small = await (await fetch(`${server.base}/console/api/tools?profile=small`)).json();
    assert.deepEqual(small.tools.map((t) => t.name), ['greet']);
    const near = await assertError(await fetch(`${server.base}/console/api/tools?profile=smal`), 404, 'not_found', 'typo');
    assert.match(near.error.suggestion, /small/);
  });
});

describe('console API: calls', () => {
  it('GET calls: the audit log\'s records newest first, with /audit\'s filters and a source filter', async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-console-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'audit.jsonl');
    const server = await serverForTest(t, { config: `audit:\n  enabled: true\n  path: ${file}\n  flush_interval_ms: 100\n` });
    const client = await connectClient(t, server);
    await client.callTool({ name: 'greet', arguments: { name: 'one' } });
    await client.callTool({ name: 'test_error_handling', arguments: {} });
    await client.callTool({ name: 'greet', arguments: { name: 'two' } });
    const body = await waitFor('three records', async () => {
      const b = await (await fetch(`${server.base}/console/api/calls`)).json();
      return b.records?.length >= 3 ? b : null;
    });
    assert.equal(body.audit, 'file');
    assert.deepEqual(body.records.map((r) => r.target), ['greet', 'test_error_handling', 'greet'].reverse());
    assert.ok(Date.parse(body.records[0].ts) >= Date.parse(body.records[2].ts), 'newest first');
    const errors = await (await fetch(`${server.base}/console/api/calls?outcome=error`)).json();
    assert.deepEqual(errors.records.map((r) => r.target), ['test_error_handling']);
    const greets = await (await fetch(`${server.base}/console/api/calls?tool=greet&source=conformance&since=1h&limit=1`)).json();
    assert.equal(greets.records.length, 1);
    assert.equal(greets.records[0].target, 'greet');
    const elsewhere = await (await fetch(`${server.base}/console/api/calls?source=elsewhere`)).json();
    assert.deepEqual(elsewhere.records, []);
    const audit = await (await fetch(`${server.base}/audit?source=conformance`)).json();
    assert.equal(audit.records.length, 3, 'GET /audit takes the source filter too');
    const bad = await assertError(await fetch(`${server.base}/console/api/calls?since=yesterday`), 400, 'bad_request', 'since');
    assert.match(bad.error.message, /since/);
    await assertError(await fetch(`${server.base}/console/api/calls?who=me`), 400, 'bad_request', 'unknown filter');
  });

  it('calls/stream: a call made by an MCP client arrives within a second, even with the audit log off', async (t) => {
    const server = await serverForTest(t);
    const off = await (await fetch(`${server.base}/console/api/calls`)).json();
    assert.deepEqual(off, { audit: 'off', records: [] });
    const client = await connectClient(t, server);
    let answered = 0;
    const events = await readEvents(`${server.base}/console/api/calls/stream`, 'call', 2, {
      onOpen: async () => {
        await client.callTool({ name: 'greet', arguments: { name: 'live' } });
        answered = Date.now();
        await client.callTool({ name: 'test_error_handling', arguments: {} });
      },
    });
    assert.equal(events[0].data.target, 'greet');
    assert.equal(events[0].data.method, 'tools/call');
    assert.equal(events[0].data.outcome, 'ok');
    assert.equal(events[0].data.source, 'conformance');
    assert.ok(events[0].data.args_sha256, 'the arguments\' digest, never the arguments');
    assert.equal(events[0].data.arguments, undefined);
    assert.ok(events[0].at - answered < 1000, `${events[0].at - answered} ms after the answer`);
    assert.equal(events[1].data.target, 'test_error_handling');
    assert.equal(events[1].data.outcome, 'tool_error');
  });
});

describe('console API: sessions and tasks', () => {
  it('lists HTTP sessions with their client, ends one (recorded in the audit log under the operator)', async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-console-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'audit.jsonl');
    const server = await serverForTest(t, {
      config: `http:\n  bearer_tokens_env: CONSOLE_TOKENS\naudit:\n  enabled: true\n  path: ${file}\n  flush_interval_ms: 100\n`,
      env: { CONSOLE_TOKENS: TOKEN },
    });
    const auth = bearer(TOKEN);
    const client = await connectClient(t, server, auth);
    await client.callTool({ name: 'greet', arguments: { name: 'a' } });
    const { sessions } = await (await fetch(`${server.base}/console/api/sessions`, { headers: auth })).json();
    const mine = sessions.find((s) => s.client.name === 'console-test');
    assert.ok(mine, JSON.stringify(sessions));
    assert.equal(mine.client.version, '1.0.0');
    assert.equal(mine.transport, 'streamable_http');
    assert.match(mine.protocol_version, /^\d{4}-\d{2}-\d{2}$/);
    assert.match(mine.principal, /^bearer:/);
    assert.equal(mine.profile, '');
    assert.ok(mine.age_s >= 0 && mine.idle_s >= 0);
    assert.ok(mine.replica);

    const ended = await fetch(`${server.base}/console/api/sessions/${encodeURIComponent(mine.id)}`, { method: 'DELETE', headers: auth });
    assert.equal(ended.status, 204);
    assertConsoleHeaders(ended, 'DELETE');
    await assert.rejects(client.callTool({ name: 'greet', arguments: { name: 'b' } }), 'the session is gone');
    const after = await (await fetch(`${server.base}/console/api/sessions`, { headers: auth })).json();
    assert.ok(!after.sessions.some((s) => s.id === mine.id));
    await assertError(await fetch(`${server.base}/console/api/sessions/${mine.id}`, { method: 'DELETE', headers: auth }), 404, 'not_found', 'again');
    await assertError(await fetch(`${server.base}/console/api/sessions/${mine.id}`, { headers: auth }), 405, 'method_not_allowed', 'GET one');
    await assertError(await fetch(`${server.base}/console/api/sessions/${mine.id}`, { method: 'DELETE' }), 401, 'unauthorized', 'no token');

    const records = await waitFor('the action records', async () => {
      const b = await (await fetch(`${server.base}/console/api/calls?limit=0`, { headers: auth })).json();
      const actions = b.records.filter((r) => r.method === 'console/end_session');
      return actions.length >= 2 ? actions : null;
    });
    const done = records.find((r) => r.outcome === 'ok');
    assert.equal(done.target, mine.id);
    assert.equal(done.principal, mine.principal, 'under the operator\'s principal');
    assert.ok(records.some((r) => r.outcome === 'tool_error' && r.code === 'NOT_FOUND'));
  });

  it('lists a working task and cancels it as the operator', async (t) => {
    const server = await serverForTest(t, { config: 'server:\n  task_poll_interval_ms: 100\n' });
    const client = await connectClient(t, server);
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 30 }, task: { ttl: 60000 } } },
      CreateTaskResultSchema,
    );
    const listed = await waitFor('the task', async () => {
      const b = await (await fetch(`${server.base}/console/api/tasks`)).json();
      return b.tasks.find((x) => x.id === task.taskId);
    });
    assert.equal(listed.status, 'working');
    assert.equal(listed.tool, 'slow_compute');
    assert.ok(listed.session);
    assert.ok(Date.parse(listed.created_at) <= Date.parse(listed.updated_at));
    const cancelled = await fetch(`${server.base}/console/api/tasks/${task.taskId}/cancel`, { method: 'POST' });
    assert.equal(cancelled.status, 202);
    const status = await client.experimental.tasks.getTask(task.taskId);
    assert.equal(status.status, 'cancelled');
    assert.match(status.statusMessage ?? '', /operator/);
    await assertError(await fetch(`${server.base}/console/api/tasks/${task.taskId}/cancel`, { method: 'POST' }), 404, 'not_found', 'again');
    await assertError(await fetch(`${server.base}/console/api/tasks/${task.taskId}/cancel`), 405, 'method_not_allowed', 'GET');
    await assertError(await fetch(`${server.base}/console/api/tasks/x/y/cancel`, { method: 'POST' }), 404, 'not_found', 'bad path');
    const left = await (await fetch(`${server.base}/console/api/tasks`)).json();
    assert.ok(!left.tasks.some((x) => x.id === task.taskId));
  });
});

describe('console API: reload', () => {
  it('POST reload waits for the reload and says what changed per source; too soon is 429', async (t) => {
    const fixture = await startCatalogFixture({ tools: 20 });
    t.after(() => fixture.close());
    const server = await serverForTest(t, {
      packs: '',
      env: { AGENT_PAYMENT_API_URL: fixture.url, AGENT_PAYMENT_API_KEY: fixture.apiKey, AGENT_PAYMENT_BUDGET_KEY: fixture.budgetKey },
      config: `rest:\n  shop:\n    preset: agentpmt\n    base_url: ${fixture.url}\n    refresh_interval_s: 0\nreload:\n  min_interval_s: 0\n`,
    });
    await waitFor('the catalog', async () => {
      const b = await (await fetch(`${server.base}/console/api/tools?source=shop`)).json();
      return b.tools.length >= 19;
    });
    const same = await fetch(`${server.base}/console/api/reload`, { method: 'POST' });
    assert.equal(same.status, 200);
    assert.deepEqual(await same.json(), { status: 'done', sources: [{ name: 'shop', added: [], changed: [], removed: [], error: null }] });

    fixture.changeCatalog({ add: [fixture.entry('newproduct0000000000000001', 'Fresh Tool', 'Just added.', { type: 'object', properties: {} })] });
    const fresh = await (await fetch(`${server.base}/console/api/reload`, { method: 'POST' })).json();
    assert.equal(fresh.status, 'done');
    const shop = fresh.sources.find((s) => s.name === 'shop');
    assert.deepEqual(shop.added, ['fresh-tool']);
    assert.deepEqual(shop.removed, []);

    fixture.changeCatalog({ remove: ['newproduct0000000000000001'] });
    const gone = await (await fetch(`${server.base}/console/api/reload`, { method: 'POST' })).json();
    assert.deepEqual(gone.sources.find((s) => s.name === 'shop').removed, ['fresh-tool']);

    await assertError(await fetch(`${server.base}/console/api/reload`), 405, 'method_not_allowed', 'GET');
    const records = await readEvents(`${server.base}/console/api/calls/stream`, 'call', 1, {
      onOpen: () => fetch(`${server.base}/console/api/reload`, { method: 'POST' }),
    });
    assert.equal(records[0].data.method, 'console/reload');
    assert.equal(records[0].data.outcome, 'ok');
  });

  it('a reload asked too soon after the last is 429 with Retry-After', async (t) => {
    const fixture = await startCatalogFixture({ tools: 5 });
    t.after(() => fixture.close());
    const server = await serverForTest(t, {
      packs: '',
      env: { AGENT_PAYMENT_API_URL: fixture.url, AGENT_PAYMENT_API_KEY: fixture.apiKey, AGENT_PAYMENT_BUDGET_KEY: fixture.budgetKey },
      config: `rest:\n  shop:\n    preset: agentpmt\n    base_url: ${fixture.url}\n    refresh_interval_s: 0\nreload:\n  min_interval_s: 60\n`,
    });
    assert.equal((await fetch(`${server.base}/console/api/reload`, { method: 'POST' })).status, 200);
    const soon = await fetch(`${server.base}/console/api/reload`, { method: 'POST' });
    await assertError(soon, 429, 'too_soon', 'soon');
    assert.ok(Number(soon.headers.get('retry-after')) > 1);
  });
});

describe('console API: config', () => {
  it('GET config: the file as served with its secrets as ***, and what config check says of it now', async (t) => {
    const upstream = await startHttpServer();
    t.after(() => upstream.stop().catch(() => {}));
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-console-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'toolport.yaml');
    const SECRET = 'upstream-secret-token-8c2f';
    writeFileSync(file, `upstreams:\n  remote:\n    url: ${upstream.url}\n    headers:\n      X-Api-Key: ${SECRET}\n` +
      `console:\n  trace_viewer_url: https://user:pw@traces.example/{trace_id}\n`);
    const server = await serverForTest(t, { extraArgs: ['--config', file], env: { MAX_DOWNSTREAM_CALLS_PER_REQUEST: '33' } });
    const res = await fetch(`${server.base}/console/api/config`);
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.ok(!text.includes(SECRET), 'never the secret');
    assert.ok(!text.includes('user:pw'), 'never a URL\'s password');
    const body = JSON.parse(text);
    assert.equal(body.effective.file, file);
    assert.equal(body.effective.settings.upstreams.remote.headers['X-Api-Key'], '***');
    assert.equal(body.effective.settings.upstreams.remote.url, upstream.url);
    assert.equal(body.effective.served.transport, 'http');
    assert.deepEqual(body.effective.served.packs, ['conformance']);
    assert.ok(body.effective.served.sources.some((s) => s.name === 'remote' && s.kind === 'upstream'));
    assert.deepEqual(body.check, { ok: true, findings: [] });
    // Every key as it takes effect, and from where.
    const key = (p) => body.effective.keys.find((k) => k.path === p);
    assert.deepEqual(key('upstreams.remote.url'), { path: 'upstreams.remote.url', value: upstream.url, from: 'file' });
    assert.deepEqual(key('upstreams.remote.headers').value, { 'X-Api-Key': '***' });
    assert.deepEqual(key('pipeline.budget.max_downstream_calls_per_request'),
      { path: 'pipeline.budget.max_downstream_calls_per_request', value: 33, from: 'env MAX_DOWNSTREAM_CALLS_PER_REQUEST' });
    assert.equal(key('http.max_body_bytes').from, 'default');
    assert.equal(typeof key('http.max_body_bytes').value, 'number');
    assert.equal(key('console.trace_viewer_url').value, 'https://***@traces.example/{trace_id}');
    assert.equal(key('http.max_sessions').value, 100000);

    // The file broken after the start: the check says so, naming the key.
    writeFileSync(file, 'http:\n  max_sesions: 5\n');
    const broken = await (await fetch(`${server.base}/console/api/config`)).json();
    assert.equal(broken.check.ok, false);
    assert.equal(broken.check.findings[0].level, 'error');
    assert.match(broken.check.findings[0].message, /max_sesions/);
    await assertError(await fetch(`${server.base}/console/api/config`, { method: 'PUT', body: '{}' }), 405, 'method_not_allowed', 'PUT');
  });
});

// POSTs a console call and reads its events until one of `until` arrives; `onEvent` may act
// on each (answer a question, cancel).
async function consoleCall(server, body, { headers = {}, until = ['result', 'error'], onEvent } = {}) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 15000);
  const res = await fetch(`${server.base}/console/api/call`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/event-stream');
  const events = [];
  try {
    for await (const event of sseEvents(res)) {
      events.push(event);
      if (onEvent) await onEvent(event, events);
      if (until.includes(event.event)) break;
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return events;
}

describe('console API: the playground', () => {
  it('POST call: started, progress, then the result, through the pipeline as the operator', async (t) => {
    const server = await serverForTest(t, {
      config: 'http:\n  bearer_tokens_env: CONSOLE_TOKENS\n',
      env: { CONSOLE_TOKENS: TOKEN },
    });
    const auth = bearer(TOKEN);
    const events = await consoleCall(server, { tool: 'test_tool_with_progress', arguments: {} }, { headers: auth });
    assert.equal(events[0].event, 'started');
    assert.match(events[0].data.call_id, /^[0-9a-f]{24}$/);
    const progress = events.filter((e) => e.event === 'progress');
    assert.deepEqual(progress.map((e) => e.data.progress), [0, 50, 100]);
    assert.equal(progress[2].data.total, 100);
    assert.match(progress[2].data.message, /step 100/);
    const result = events.at(-1);
    assert.equal(result.event, 'result');
    assert.ok(result.data._meta, 'with _meta');
    assert.ok(result.data.content[0].text);

    const greet = await consoleCall(server, { tool: 'greet', arguments: { name: 'Console' } }, { headers: auth });
    assert.equal(greet.at(-1).data.content[0].text, 'Hello, Console!');
    // Validation is the pipeline's: a bad argument is the tool's error result.
    const invalid = await consoleCall(server, { tool: 'greet', arguments: { name: 5 } }, { headers: auth });
    assert.equal(invalid.at(-1).event, 'result');
    assert.equal(invalid.at(-1).data.isError, true);
    const unknown = await consoleCall(server, { tool: 'no_such_tool', arguments: {} }, { headers: auth });
    assert.equal(unknown.at(-1).event, 'error');
    assert.equal(typeof unknown.at(-1).data.code, 'number');
    // The call is the operator's in the session list? No: it is its own, gone when it ended.
    const { sessions } = await (await fetch(`${server.base}/console/api/sessions`, { headers: auth })).json();
    assert.ok(!sessions.some((s) => s.client.name === 'toolport-console'));
  });

  it('POST call of a gateway\'s tool: the upstream\'s content and structuredContent as JSON, not as bytes', async (t) => {
    // The gateway keeps an upstream's result unread (raw JSON); the stream must write what it holds.
    const upstream = await startConsoleUpstream();
    t.after(() => upstream.stop());
    const server = await serverForTest(t, { packs: '', config: `upstreams:\n  trips:\n    url: ${upstream.url}\n` });
    await waitFor('the upstream tools', async () => {
      const body = await (await fetch(`${server.base}/console/api/tools?source=trips`)).json();
      return body.tools.length > 0;
    });
    const args = { trip: { from: 'Oslo', to: 'Rome' }, travellers: [{ name: 'Ada', age: 36 }] };
    const events = await consoleCall(server, { tool: 'plan_trip', arguments: args });
    const result = events.at(-1);
    assert.equal(result.event, 'result');
    const structured = { summary: 'Oslo to Rome for Ada (36)', travellers: 1, class: 'economy' };
    assert.deepEqual(result.data.structuredContent, structured);
    assert.deepEqual(result.data.content, [{ type: 'text', text: JSON.stringify(structured) }]);
    assert.ok(result.data._meta, 'with _meta');
  });

  it('answers an elicitation from the page, and cancels a call', async (t) => {
    const server = await serverForTest(t);
    const events = await consoleCall(server, { tool: 'test_elicitation', arguments: { message: 'Your name?' } }, {
      onEvent: async (event, all) => {
        if (event.event !== 'elicitation') return;
        assert.equal(event.data.message, 'Your name?');
        assert.equal(event.data.requestedSchema.type, 'object');
        const callId = all[0].data.call_id;
        const url = `${server.base}/console/api/call/${callId}/elicitation/${event.data.elicitation_id}`;
        const bad = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"action":"maybe"}' });
        await assertError(bad, 400, 'bad_request', 'action');
        const ok = await fetch(url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ action: 'accept', content: { response: 'Ada' } }),
        });
        assert.equal(ok.status, 202);
        const again = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"action":"decline"}' });
        await assertError(again, 404, 'not_found', 'answered twice');
      },
    });
    assert.ok(events.some((e) => e.event === 'elicitation'));
    assert.equal(events.at(-1).event, 'result');
    assert.match(JSON.stringify(events.at(-1).data.content), /Ada/);

    const cancelled = await consoleCall(server, { tool: 'slow_compute', arguments: { seconds: 30 } }, {
      onEvent: async (event) => {
        if (event.event !== 'started') return;
        const res = await fetch(`${server.base}/console/api/call/${event.data.call_id}/cancel`, { method: 'POST' });
        assert.equal(res.status, 202);
      },
    });
    assert.equal(cancelled.at(-1).event, 'error');
    await assertError(await fetch(`${server.base}/console/api/call/0123/cancel`, { method: 'POST' }), 404, 'not_found', 'unknown call');
  });

  it('refuses a body that is not JSON, too large, of another type, or without a tool', async (t) => {
    const server = await serverForTest(t);
    const post = (body, type = 'application/json') =>
      fetch(`${server.base}/console/api/call`, { method: 'POST', headers: { 'Content-Type': type }, body });
    await assertError(await post('{not json'), 400, 'bad_request', 'malformed');
    await assertError(await post('[]'), 400, 'bad_request', 'array');
    await assertError(await post('{"arguments":{}}'), 400, 'bad_request', 'no tool');
    await assertError(await post('{"tool":"greet","arguments":[1]}'), 400, 'bad_request', 'arguments');
    await assertError(await post('tool=greet', 'application/x-www-form-urlencoded'), 415, 'unsupported_media_type', 'form');
    await assertError(await post(JSON.stringify({ tool: 'greet', arguments: { name: 'x'.repeat(1100000) } })), 413, 'body_too_large', 'large');
    await assertError(await fetch(`${server.base}/console/api/call`), 405, 'method_not_allowed', 'GET');
  });
});
