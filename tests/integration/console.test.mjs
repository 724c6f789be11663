// The operator console's JSON API on the real binary (docs/console.md): who may use it
// (loopback without auth, the server's own bearer tokens, OAuth tokens with the operator
// scope), the header fields of every answer, and bad input (unknown paths, wrong methods).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { serverForTest, startHttpServer, waitFor } from './lib/harness.mjs';
import { startAuthServer, makeKey } from './lib/auth_server.mjs';

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
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    if (onOpen) await onOpen();
    for await (const chunk of res.body) {
      buffer += decoder.decode(chunk, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const name = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (name === type && data) events.push({ at: Date.now(), data: JSON.parse(data) });
      }
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
