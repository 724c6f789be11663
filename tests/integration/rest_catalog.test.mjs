// REST tool catalogs in the real binary against the AgentPMT fixture
// (tests/fixtures/agentpmt), which speaks the API's wire format, with the official
// TypeScript SDK as the client: every page listed with the schemas repaired, calls
// proxied with the keys, arguments refused before anything is sent, API failures as
// structured tool errors on a connection that stays up, an oversized answer refused while
// it is read, a streamed answer as progress, a catalog that is down at start-up and comes
// back, and hot reload (SIGHUP, `toolport reload`) seen by the client as list_changed only
// when the catalog really changed.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, writeFileSync, rmSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startHttpServer, runToolport, sleep, waitFor } from './lib/harness.mjs';
import { startCatalogFixture, SPECIAL } from '../fixtures/agentpmt/server.mjs';

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

function keysFor(fixture) {
  return { AGENT_PAYMENT_API_URL: fixture.url, AGENT_PAYMENT_API_KEY: fixture.apiKey, AGENT_PAYMENT_BUDGET_KEY: fixture.budgetKey };
}

async function connect(server) {
  const client = new Client({ name: 'toolport-it-rest', version: '1.0.0' }, { capabilities: {} });
  const changes = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => changes.push(Date.now()));
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  return { client, changes };
}

// Every tool of the server, following cursors.
async function allTools(client) {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

const code = (result) => result.structuredContent?.error_code ?? (result.isError ? 'ERROR' : 'OK');
const purchases = (fixture) => fixture.stats().requests.filter((r) => r.path === '/products/purchase');

describe('REST catalog: the agentpmt preset against the fixture', () => {
  let fixture;
  let server;
  let client;
  let byTitle;

  before(async () => {
    fixture = await startCatalogFixture({ tools: 250 });
    server = await startHttpServer({
      packs: 'conformance',
      extraArgs: ['--rest', 'agentpmt'],
      env: keysFor(fixture),
      config: 'rest:\n  agentpmt:\n    preset: agentpmt\n    max_response_bytes: 65536\nsources:\n  agentpmt:\n    timeout_ms: 1500\n',
    });
    ({ client } = await connect(server));
    const tools = await waitFor('the catalog', async () => {
      const listed = (await allTools(client)).filter((t) => t.title);
      return listed.length >= 249 ? listed : null;
    });
    byTitle = (title) => tools.filter((t) => t.title === title);
  });
  after(async () => {
    await client?.close();
    await server?.stop();
    await fixture?.close();
  });

  it('lists all three pages, with safe names and the schemas repaired, dropping only the unusable tool', async () => {
    const tools = (await allTools(client)).filter((t) => t.title);
    assert.equal(tools.length, 249);
    assert.ok(tools.every((t) => NAME.test(t.name)), 'every name fits ^[a-zA-Z0-9_-]{1,64}$');
    assert.equal(byTitle('Unusable Tool').length, 0);
    const fetches = fixture.stats().requests.filter((r) => r.path === '/products/fetch');
    assert.deepEqual(fetches.map((r) => r.query.page), ['1', '2', '3']);
    assert.ok(fetches.every((r) => r.headers['x-api-key'] === fixture.apiKey && r.headers['x-budget-key'] === fixture.budgetKey));

    const [cache] = byTitle('Cache Entry');
    assert.equal(cache.name, 'cache-entry');
    assert.deepEqual(cache.inputSchema.required, ['key']);
    assert.equal(cache.inputSchema.properties.ttl.default, 3600);
    assert.equal(cache.inputSchema.properties.ratio.default, 0.5);
    assert.equal(cache.inputSchema.properties.enabled.default, true);
    // The display name stays in the description, for hosts that show only name and description.
    assert.equal(cache.description, 'Cache Entry \u2014 Stores a value for ttl seconds.');
    assert.equal(byTitle('Unit Convert')[0].inputSchema.properties.unit.default, undefined);
    assert.deepEqual(byTitle('Server Time')[0].inputSchema, { type: 'object', properties: {} });
    // Two products with one display name: one keeps it, the other gets a stable suffix.
    const twins = byTitle('Echo Parameters').map((t) => t.name).sort();
    assert.equal(twins[0], 'echo-parameters');
    assert.match(twins[1], /^echo-parameters_[0-9a-f]{6}$/);
    // One warning per repair and per tool left out.
    assert.match(server.logs(), /tool \\"Cache Entry\\" \([0-9a-f]+\) schema repaired: properties\.ttl\.default: \\"3600\\" → 3600/);
    assert.match(server.logs(), /tool \\"Unusable Tool\\" \([0-9a-f]+\) left out: its parameters are a string/);
    // Every Data Tool takes a query, whichever way the catalog said it.
    assert.ok(tools.filter((t) => t.title.startsWith('Data Tool')).every((t) => t.inputSchema.required?.includes('query')));
  });

  it('proxies calls to /products/purchase with the keys, in each answer shape', async () => {
    fixture.reset();
    const echo = await client.callTool({ name: 'echo-parameters', arguments: { message: 'hi' } });
    assert.equal(code(echo), 'OK', JSON.stringify(echo));
    assert.deepEqual(echo.structuredContent, { echoed: { message: 'hi' } });
    assert.equal(echo._meta.downstream_api_calls, 1);
    assert.equal(echo._meta.catalog.purchase_result, 'charged 0.01');
    const [sent] = purchases(fixture);
    assert.equal(sent.method, 'POST');
    assert.deepEqual(sent.body, { product_id: SPECIAL.echo, parameters: { message: 'hi' } });
    assert.equal(sent.headers['x-api-key'], fixture.apiKey);

    const words = await client.callTool({ name: 'word-count', arguments: { text: 'one two three' } });
    assert.equal(words.content[0].text, '3 words');
    const converted = await client.callTool({ name: 'currency-convert', arguments: { amount: 10 } });
    assert.equal(converted.content[0].text, '10 USD = 9.00 EUR');
    assert.equal(converted._meta.catalog.balance, 9.99);
  });

  it('refuses bad arguments before anything is sent', async () => {
    fixture.reset();
    const missing = await client.callTool({ name: 'echo-parameters', arguments: {} });
    assert.equal(missing.isError, true);
    assert.equal(code(missing), 'MISSING_PARAMETER');
    const wrong = await client.callTool({ name: 'bulk-export', arguments: { size_kb: 'lots' } });
    assert.equal(code(wrong), 'INVALID_ARGUMENT');
    assert.equal(purchases(fixture).length, 0);
  });

  it('turns API failures into structured tool errors without secrets, and keeps serving', async () => {
    const refused = await client.callTool({ name: 'premium-lookup', arguments: { query: 'x' } });
    assert.equal(code(refused), 'UPSTREAM_ERROR');
    assert.match(refused.structuredContent.error, /insufficient budget for key \[redacted\]/);
    assert.equal(refused.structuredContent.transient, false, 'the API said no: the same call fails again');
    assert.ok(!JSON.stringify(refused).includes(fixture.budgetKey));
    const broken = await client.callTool({ name: 'broken-service', arguments: {} });
    assert.equal(code(broken), 'UPSTREAM_ERROR');
    assert.equal(broken.structuredContent.transient, true);
    assert.match(broken.structuredContent.error, /HTTP 500: internal failure in product backend/);
    const after = await client.callTool({ name: 'word-count', arguments: { text: 'still here' } });
    assert.equal(after.content[0].text, '2 words');
  });

  it('ends a call the API is slow to answer at the timeout, and serves the next', async () => {
    const started = Date.now();
    const slow = await client.callTool({ name: 'slow-report', arguments: { delay_ms: 5000 } });
    assert.equal(code(slow), 'TIMEOUT', JSON.stringify(slow));
    assert.ok(Date.now() - started < 4000, `took ${Date.now() - started} ms`);
    const quick = await client.callTool({ name: 'slow-report', arguments: { delay_ms: 10 } });
    assert.equal(quick.content[0].text, 'slow report done');
  });

  it('refuses an oversized answer while reading it', async () => {
    const big = await client.callTool({ name: 'bulk-export', arguments: { size_kb: 2048 } });
    assert.equal(code(big), 'MCP_RESPONSE_TOO_LARGE', JSON.stringify(big).slice(0, 300));
    assert.match(big.structuredContent.error, /over 65536 bytes/);
    const small = await client.callTool({ name: 'bulk-export', arguments: { size_kb: 1 } });
    assert.equal(code(small), 'OK');
  });

  it('forwards a streamed answer as progress notifications and assembles the result', async () => {
    fixture.reset();
    const progress = [];
    const story = await client.callTool({ name: 'stream-story', arguments: { chunks: 4, stream: true } }, undefined,
                                        { onprogress: (p) => progress.push(p) });
    assert.equal(code(story), 'OK');
    assert.equal(story.content[0].text, 'part 1. part 2. part 3. part 4. ');
    assert.deepEqual(progress.map((p) => p.message), ['part 1. ', 'part 2. ', 'part 3. ', 'part 4. ']);
    assert.deepEqual(progress.map((p) => p.progress), [1, 2, 3, 4]);
    const [sent] = purchases(fixture);
    assert.equal(sent.query.stream, 'true');
    assert.match(sent.headers.accept, /text\/event-stream/);
  });
});

// The server's peak resident size (VmHWM), in MB.
function peakRssMb(server) {
  const status = readFileSync(`/proc/${server.child.pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)[1]) / 1024;
}

// The peak RSS a server may reach without having held a 60 MB page: Toolport alone is ~15 MB;
// a sanitizer build (its shadow memory makes the address space terabytes large) starts near
// 100 MB and keeps freed memory in quarantine, but holding the page took either past 500 MB.
function peakRssBoundMb(server) {
  const status = readFileSync(`/proc/${server.child.pid}/status`, 'utf8');
  const vmSizeKb = Number(/^VmSize:\s+(\d+) kB/m.exec(status)[1]);
  return vmSizeKb > 1024 ** 3 ? 300 : 100;
}

describe('REST catalog: bounded pages, redacted answers, the shorter deadline', () => {
  let fixture;

  before(async () => {
    fixture = await startCatalogFixture({ tools: 20 });
  });
  after(async () => {
    await fixture?.close();
  });

  it('stops reading a 60 MB list page at the catalog\'s max_response_bytes, with a clear error and a small server', async () => {
    fixture.reset();
    fixture.setHugePage(60e6);
    const server = await startHttpServer({
      packs: 'conformance',
      env: keysFor(fixture),
      config: `rest:\n  shop:\n    preset: agentpmt\n    base_url: ${fixture.url}\n    max_response_bytes: 1048576\n    retry_max_s: 60\n`,
    });
    try {
      await waitFor('the refusal', async () => /catalog shop: fetching the catalog failed/.test(server.logs()), 20000);
      assert.match(server.logs(), /page 1 of the catalog is over 1048576 bytes \(max_response_bytes\); it was not read further/);
      const health = await (await fetch(`${server.base}/health`)).json();
      assert.equal(health.services.shop, 'unreachable');
      // Before, the whole page was held and parsed (the probe saw 1 GB); now the read stops
      // at the cap. Toolport alone is ~15 MB.
      const peak = peakRssMb(server);
      assert.ok(peak < peakRssBoundMb(server), `peak RSS ${peak.toFixed(1)} MB`);
      assert.ok(fixture.hugeBytesSent() < 30e6, `the fixture wrote ${fixture.hugeBytesSent()} bytes before the connection closed`);
      // The rest serves, and the catalog answers again once its pages are small.
      fixture.setHugePage(0);
      const client = new Client({ name: 'toolport-it-rest', version: '1.0.0' }, { capabilities: {} });
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      try {
        assert.ok((await allTools(client)).length > 0);
      } finally {
        await client.close();
      }
    } finally {
      await server.stop();
    }
  });

  describe('with tools listed', () => {
    let server;
    let client;

    before(async () => {
      fixture.reset();
      server = await startHttpServer({
        packs: 'conformance',
        env: keysFor(fixture),
        config: `rest:\n  shop:\n    preset: agentpmt\n    base_url: ${fixture.url}\n    request_timeout_ms: 300\nsources:\n  shop:\n    timeout_ms: 30000\n`,
      });
      ({ client } = await connect(server));
      await waitFor('the catalog', async () => (await allTools(client)).some((t) => t.name === 'key-check'));
    });
    after(async () => {
      await client?.close();
      await server?.stop();
    });

    it('redacts the keys a catalog echoes in a JSON success answer, in content, structuredContent and _meta', async () => {
      const checked = await client.callTool({ name: 'key-check', arguments: {} });
      assert.equal(code(checked), 'OK', JSON.stringify(checked));
      assert.deepEqual(checked.structuredContent, {
        account: { api_key: '[redacted]', budget_key: '[redacted]' },
        note: 'key [redacted] is active',
      });
      assert.deepEqual(JSON.parse(checked.content[0].text), checked.structuredContent);
      assert.equal(checked._meta.catalog.purchase_result, 'charged to budget key [redacted]');
      const wire = JSON.stringify(checked);
      assert.ok(!wire.includes(fixture.apiKey) && !wire.includes(fixture.budgetKey), wire);
    });

    it('ends a call at request_timeout_ms (300 ms) under a 30 s pipeline deadline', async () => {
      const slow = await client.callTool({ name: 'slow-report', arguments: { delay_ms: 8000 } });
      assert.equal(code(slow), 'TIMEOUT', JSON.stringify(slow));
      assert.match(slow.structuredContent.error, /did not answer in time/);
      const quick = await client.callTool({ name: 'slow-report', arguments: { delay_ms: 10 } });
      assert.equal(quick.content[0].text, 'slow report done');
    });
  });
});

describe('REST catalog: down at start-up, hot reload', () => {
  let fixture;

  before(async () => {
    fixture = await startCatalogFixture({ tools: 20 });
  });
  after(async () => {
    await fixture?.close();
  });

  it('serves without the catalog, says degraded, and adds its tools when it answers', async () => {
    fixture.reset();
    fixture.setDown(true);
    const server = await startHttpServer({
      packs: 'conformance',
      env: keysFor(fixture),
      config: `rest:\n  shop:\n    preset: agentpmt\n    base_url: ${fixture.url}\n    retry_max_s: 1\n`,
    });
    let client;
    try {
      let changes;
      ({ client, changes } = await connect(server));
      const health = await waitFor('the first failed fetch', async () => {
        const report = await (await fetch(`${server.base}/health`)).json();
        return report.services.shop === 'unreachable' ? report : null;
      });
      assert.equal(health.status, 'degraded', JSON.stringify(health));
      assert.equal((await allTools(client)).filter((t) => t.title).length, 0);
      const conformance = (await allTools(client)).length;
      assert.ok(conformance > 0, 'the other sources serve');
      fixture.setDown(false);
      await waitFor('list_changed', async () => changes.length > 0, 8000);
      assert.equal((await allTools(client)).filter((t) => t.title).length, 19);
      // After a call the catalog and its service (whose breaker is closed) are one component
      // with one state.
      assert.equal(code(await client.callTool({ name: 'word-count', arguments: { text: 'a b' } })), 'OK');
      const healthy = await (await fetch(`${server.base}/health`)).json();
      assert.equal(healthy.status, 'healthy', JSON.stringify(healthy));
      assert.equal(healthy.services.shop, 'available', JSON.stringify(healthy));
      assert.equal(healthy.services['service:shop'], undefined, JSON.stringify(healthy));
      assert.match(server.logs(), /fetching the catalog failed .*HTTP 503/);
    } finally {
      await client?.close();
      await server.stop();
    }
  });

  it('reloads on SIGHUP and `toolport reload`, announcing only real changes', async () => {
    fixture.reset();
    const server = await startHttpServer({
      packs: 'conformance',
      env: keysFor(fixture),
      extraArgs: [],
      // Reloads back to back: no minimum interval (one at a time still holds).
      config: `reload:\n  min_interval_s: 0\nrest:\n  shop:\n    preset: agentpmt\n    base_url: ${fixture.url}\n    refresh_interval_s: 0\n`,
    });
    let client;
    try {
      let changes;
      ({ client, changes } = await connect(server));
      await waitFor('the catalog', async () => (await allTools(client)).filter((t) => t.title).length === 19);
      const fetchCount = () => fixture.stats().requests.filter((r) => r.path === '/products/fetch').length;
      const before = changes.length;

      // Nothing changed: a reload fetches but announces nothing.
      const fetched = fetchCount();
      const same = await runToolport(['reload', '--url', server.url]);
      assert.equal(same.status, 0, same.stderr);
      assert.deepEqual(JSON.parse(same.stdout), { reloading: ['shop'], started: true });
      await waitFor('the reload fetch', async () => fetchCount() > fetched);
      await sleep(300);
      assert.equal(changes.length, before);

      // A new product: SIGHUP, and the client hears of it.
      fixture.changeCatalog({ add: [fixture.entry('newproduct0000000000000001', 'Fresh Tool', 'Just added.', { type: 'object', properties: {} })] });
      server.child.kill('SIGHUP');
      await waitFor('list_changed after SIGHUP', async () => changes.length > before);
      assert.ok((await allTools(client)).some((t) => t.name === 'fresh-tool'));

      // Removed again: `toolport reload`, and the tool is gone.
      const count = changes.length;
      fixture.changeCatalog({ remove: ['newproduct0000000000000001'] });
      assert.equal((await runToolport(['reload', '--url', server.base])).status, 0);
      await waitFor('list_changed after reload', async () => changes.length > count);
      assert.ok(!(await allTools(client)).some((t) => t.name === 'fresh-tool'));
    } finally {
      await client?.close();
      await server.stop();
    }
  });

  it('refreshes on its interval, announcing the change', async () => {
    fixture.reset();
    const server = await startHttpServer({
      packs: 'conformance',
      env: keysFor(fixture),
      config: `rest:\n  shop:\n    preset: agentpmt\n    base_url: ${fixture.url}\n    refresh_interval_s: 1\n`,
    });
    let client;
    try {
      let changes;
      ({ client, changes } = await connect(server));
      await waitFor('the catalog', async () => (await allTools(client)).filter((t) => t.title).length === 19);
      // Refreshes that find the same catalog announce nothing.
      const before = changes.length;
      const fetches = () => fixture.stats().requests.filter((r) => r.path === '/products/fetch').length;
      const seen = fetches();
      await waitFor('two refreshes', async () => fetches() >= seen + 2, 5000);
      assert.equal(changes.length, before);
      fixture.changeCatalog({ add: [fixture.entry('newproduct0000000000000002', 'Timed Tool', 'Added later.', { type: 'object' })] });
      await waitFor('list_changed from the refresh', async () => changes.length > before, 5000);
      assert.ok((await allTools(client)).some((t) => t.name === 'timed-tool'));
    } finally {
      await client?.close();
      await server.stop();
    }
  });

  it('says why when the API refuses the keys, without showing them', async () => {
    const server = await startHttpServer({
      packs: 'conformance',
      env: { ...keysFor(fixture), AGENT_PAYMENT_BUDGET_KEY: 'wrong-budget-key-123' },
      config: `rest:\n  shop:\n    preset: agentpmt\n    base_url: ${fixture.url}\n`,
    });
    try {
      await waitFor('the refusal', async () => /catalog shop: fetching the catalog failed/.test(server.logs()));
      assert.match(server.logs(), /HTTP 401: The API refused the credentials \(HTTP 401\): Invalid API key or budget key/);
      assert.ok(!server.logs().includes('wrong-budget-key-123'));
      const health = await (await fetch(`${server.base}/health`)).json();
      assert.equal(health.services.shop, 'unreachable');
    } finally {
      await server.stop();
    }
  });

  it('keeps /admin/reload behind the bearer token', async () => {
    const server = await startHttpServer({
      packs: 'conformance',
      env: { ...keysFor(fixture), TOOLPORT_TOKEN: '', RELOAD_TEST_TOKENS: 's3cret-token' },
      config: `http:\n  bearer_tokens_env: RELOAD_TEST_TOKENS\nrest:\n  shop:\n    preset: agentpmt\n    base_url: ${fixture.url}\n`,
    });
    try {
      const denied = await fetch(`${server.base}/admin/reload`, { method: 'POST' });
      assert.equal(denied.status, 401);
      const refused = await runToolport(['reload', '--url', server.base], { env: { TOOLPORT_TOKEN: '' } });
      assert.equal(refused.status, 1);
      assert.match(refused.stderr, /HTTP 401/);
      const allowed = await runToolport(['reload', '--url', server.base, '--token', 's3cret-token']);
      assert.equal(allowed.status, 0, allowed.stderr);
      const get = await fetch(`${server.base}/admin/reload`, { headers: { Authorization: 'Bearer s3cret-token' } });
      assert.equal(get.status, 405);
    } finally {
      await server.stop();
    }
  });
});

// A catalog in another wire format, configured key by key: MCP tool objects under
// data, paged by `next` links, executed at /v1/tools/{name}/run with the arguments as
// the body, a bearer token from the environment, and a per-user key passed through.
async function startGenericCatalog({ nextHost = null } = {}) {
  const requests = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const url = new URL(req.url, 'http://x');
      requests.push({ method: req.method, path: url.pathname, query: url.search, auth: req.headers.authorization, user: req.headers['x-user-key'], body });
      const send = (status, value) => { res.writeHead(status, { 'Content-Type': 'application/json' }); res.end(JSON.stringify(value)); };
      if (req.headers.authorization !== 'Bearer generic-token') return send(401, { message: 'bad token' });
      if (url.pathname === '/v1/tools' && !url.searchParams.get('cursor')) {
        return send(200, {
          data: [
            { name: 'lookup.record', title: 'Lookup', description: 'Looks a record up.', inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }, annotations: { readOnlyHint: true } },
          ],
          next: nextHost ? `http://${nextHost}/v1/tools?cursor=2` : '/v1/tools?cursor=2',
        });
      }
      if (url.pathname === '/v1/tools') {
        return send(200, {
          data: [
            { name: 'weird name/with slashes', description: 'A name to make safe.', inputSchema: { type: 'object' } },
            { name: 'whoami', description: 'The token the call came with.', inputSchema: { type: 'object' } },
          ],
          next: null,
        });
      }
      const run = url.pathname.match(/^\/v1\/tools\/(.+)\/run$/);
      if (run && req.method === 'POST') {
        // whoami echoes the token the call came with, as an account lookup would.
        if (decodeURIComponent(run[1]) === 'whoami') return send(200, { result: { token: req.headers.authorization.slice(7) } });
        return send(200, { result: { tool: decodeURIComponent(run[1]), args: JSON.parse(body || '{}'), user: req.headers['x-user-key'] ?? null } });
      }
      return send(404, { message: 'no such path' });
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, requests, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
}

const genericConfig = (url, extra = '') => `${extra}rest:
  records:
    base_url: ${url}
    list: {url: /v1/tools, pagination: next, next_path: next, tools_path: data, format: mcp}
    execute: {url: "/v1/tools/{name}/run", body: "{arguments}", output_path: result}
    headers: {Authorization: "Bearer \${GENERIC_TOKEN}"}
    forward_headers: [X-User-Key]
`;

describe('REST catalog: a configured wire format', () => {
  it('follows next links, keeps original names for calls, and scopes cached results per user key', async () => {
    const catalog = await startGenericCatalog();
    // Cached only when the operator turns it on (issue 29), then per user.
    const server = await startHttpServer({ packs: 'conformance', env: { GENERIC_TOKEN: 'generic-token' },
                                           config: genericConfig(catalog.url, 'sources:\n  records: {cache: {mode: read_only}}\n') });
    const clients = [];
    try {
      const as = async (key) => {
        const client = new Client({ name: 'toolport-it-rest', version: '1.0.0' }, { capabilities: {} });
        await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { 'X-User-Key': key } } }));
        clients.push(client);
        return client;
      };
      const alice = await as('alice-key-1');
      const tools = await waitFor('the catalog', async () => {
        const listed = (await allTools(alice)).filter((t) => t.name === 'lookup_record' || t.name === 'weird_name_with_slashes');
        return listed.length === 2 ? listed : null;
      });
      assert.equal(tools.find((t) => t.name === 'lookup_record').annotations.readOnlyHint, true);
      const first = await alice.callTool({ name: 'lookup_record', arguments: { id: '7' } });
      assert.deepEqual(first.structuredContent, { tool: 'lookup.record', args: { id: '7' }, user: 'alice-key-1' });
      await alice.callTool({ name: 'lookup_record', arguments: { id: '7' } });
      const bob = await as('bob-key-2');
      const other = await bob.callTool({ name: 'lookup_record', arguments: { id: '7' } });
      assert.equal(other.structuredContent.user, 'bob-key-2', 'never the result cached for another user');
      const runs = catalog.requests.filter((r) => r.path.endsWith('/run'));
      assert.deepEqual(runs.map((r) => r.user), ['alice-key-1', 'bob-key-2'], 'the second call of alice was cached');
      assert.equal(runs[0].path, '/v1/tools/lookup.record/run');
      const weird = await bob.callTool({ name: 'weird_name_with_slashes', arguments: {} });
      assert.equal(weird.structuredContent.tool, 'weird name/with slashes');
      assert.equal(catalog.requests.at(-1).path, '/v1/tools/weird%20name%2Fwith%20slashes/run');
      assert.ok(catalog.requests.every((r) => r.auth === 'Bearer generic-token'));
      // The configured "Bearer ${GENERIC_TOKEN}" header's token, echoed without its scheme: redacted.
      const whoami = await bob.callTool({ name: 'whoami', arguments: {} });
      assert.deepEqual(whoami.structuredContent, { token: '[redacted]' });
    } finally {
      for (const c of clients) await c.close();
      await server.stop();
      await catalog.close();
    }
  });

  it('refuses a next link to another host, calling nothing there', async () => {
    const elsewhere = await startGenericCatalog();
    const catalog = await startGenericCatalog({ nextHost: new URL(elsewhere.url).host });
    const server = await startHttpServer({ packs: 'conformance', env: { GENERIC_TOKEN: 'generic-token' }, config: genericConfig(catalog.url) });
    try {
      await waitFor('the refusal', async () => /next-page link points to another host; refused/.test(server.logs()));
      const health = await (await fetch(`${server.base}/health`)).json();
      assert.equal(health.services.records, 'unreachable');
      assert.equal(elsewhere.requests.length, 0);
    } finally {
      await server.stop();
      await catalog.close();
      await elsewhere.close();
    }
  });

  it('lists and calls a catalog in process (toolport list/call --config)', async () => {
    const catalog = await startGenericCatalog();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-rest-'));
    try {
      const file = path.join(dir, 'rest.yaml');
      writeFileSync(file, genericConfig(catalog.url));
      const env = { GENERIC_TOKEN: 'generic-token' };
      const check = await runToolport(['config', 'check', file], { env });
      assert.equal(check.status, 0, check.stderr);
      assert.match(check.stdout, /^  rest: records$/m);
      writeFileSync(path.join(dir, 'bad.yaml'), 'rest:\n  records:\n    base_url: http://x\n    list: {pagination: sideways}\n');
      const bad = await runToolport(['config', 'check', path.join(dir, 'bad.yaml')]);
      assert.equal(bad.status, 2);
      assert.match(bad.stderr, /bad\.yaml:4: rest\.records\.list\.pagination: must be none, page or next/);
      const list = await runToolport(['list', '--config', file], { env });
      assert.equal(list.status, 0, list.stderr);
      assert.match(list.stdout, /lookup_record/);
      const call = await runToolport(['call', 'lookup_record', '{"id":"9"}', '--json', '--config', file], { env });
      assert.equal(call.status, 0, call.stderr);
      assert.equal(JSON.parse(call.stdout).structuredContent.args.id, '9');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await catalog.close();
    }
  });
});
