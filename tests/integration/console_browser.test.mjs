// The operator console in a real browser (Debian's headless Chromium, puppeteer-core) against
// the real binary: every page loads with no console error and no failed request, with and
// without auth (refused without the operator scope), axe-core finds no serious violation, and
// the page does what the operator needs (docs/console.md). A screenshot of every page is
// written under build/console-screenshots/.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { serverForTest, startHttpServer, waitFor } from './lib/harness.mjs';
import { startAuthServer, makeKey } from './lib/auth_server.mjs';
import { startConsoleUpstream } from './lib/console_upstream.mjs';
import { SPECIAL, startCatalogFixture } from '../fixtures/agentpmt/server.mjs';
import { assertAccessible, launchBrowser, openTab, screenshot, textOf } from './lib/console_browser.mjs';

const TOKEN = 'console-browser-operator-7c41d2';

// What shows that each page has its data (the navigation lists only the pages whose API the
// server has).
const READY = {
  overview: 'table.sources tbody tr',
  tools: '.vrow button',
  playground: '#pick-tool',
  calls: '.vlist',
  sessions: '#tasks-title',
  pins: '#pins-summary',
  configuration: '#effective-title',
};

async function navLinks(page) {
  return page.$$eval('nav[aria-label="Console pages"] a', (links) =>
    // The title without a count badge (Pins shows how many changes wait).
    links.map((a) => ({ id: new URL(a.href).pathname.split('/').pop(), title: a.querySelector('.nav-title')?.textContent ?? a.textContent })),
  );
}

// Opens each page from the navigation, waits for its data, checks it with axe-core and takes a
// screenshot named `${prefix}-${page}.png`; returns the pages seen.
async function visitEveryPage(tab, prefix) {
  const { page } = tab;
  const links = await navLinks(page);
  assert.ok(links.length >= 1, 'the navigation lists pages');
  for (const link of links) {
    await page.click(`nav a[href$="/${link.id}"]`);
    await page.waitForSelector(`nav a[aria-current="page"][href$="/${link.id}"]`);
    assert.ok(READY[link.id], `a page the test does not know: ${link.id}`);
    await page.waitForSelector(READY[link.id], { timeout: 10000 });
    assert.equal(await textOf(page, '#page-title'), link.title);
    await assertAccessible(page, `${prefix} ${link.id}`);
    await screenshot(page, `${prefix}-${link.id}`);
  }
  return links.map((l) => l.id);
}

// Submits the token prompt and waits for the server's answer: the prompt gone, or its count of
// answers grown.
async function signIn(page) {
  const before = await page.$eval('form[data-answered]', (form) => Number(form.dataset.answered));
  await page.click('button[type="submit"]');
  await page.waitForFunction(
    (n) => {
      const form = document.querySelector('form[data-answered]');
      return !form || Number(form.dataset.answered) > n;
    },
    {},
    before,
  );
}

async function mcpClient(server, headers = {}) {
  const client = new Client({ name: 'console-browser-test', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers } }));
  return client;
}

// A GET through node:http, the body as bytes (fetch would undo the gzip itself).
function get(server, path, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = http.get(`${server.base}${path}`, { headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
  });
}

describe('console page files over HTTP', () => {
  it('gzip when accepted, the same bytes inflated otherwise; ETag and 304; client routes; unknown files 404', async (t) => {
    const server = await serverForTest(t);
    const zipped = await get(server, '/console/assets/app.js', { 'Accept-Encoding': 'gzip, deflate' });
    assert.equal(zipped.status, 200);
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.equal(zipped.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(zipped.headers['cache-control'], 'no-cache');
    assert.match(zipped.headers['content-security-policy'], /script-src 'self'; style-src 'self'/);
    assert.equal(zipped.headers['x-content-type-options'], 'nosniff');
    assert.match(zipped.headers.etag, /^"[0-9a-f]{32}"$/);
    const plain = await get(server, '/console/assets/app.js', { 'Accept-Encoding': 'gzip;q=0, br' });
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.deepEqual(gunzipSync(zipped.body), plain.body);
    assert.equal(plain.headers.etag, zipped.headers.etag);

    const again = await get(server, '/console/assets/app.js', { 'If-None-Match': zipped.headers.etag });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);

    const index = await get(server, '/console/');
    assert.equal(index.status, 200);
    assert.equal(index.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(index.body.toString(), /<script type="module" src="assets\/app.js"><\/script>/);
    // A page's own address is the page (its navigation is the script's).
    const route = await get(server, '/console/tools');
    assert.equal(route.status, 200);
    assert.deepEqual(route.body, index.body);
    // The page's addresses are relative: without the slash, it is sent to the slash.
    const bare = await get(server, '/console?x=1');
    assert.equal(bare.status, 308);
    assert.equal(bare.headers.location, '/console/?x=1');
    for (const missing of ['/console/assets/nothing.js', '/console/assets/app.js/x', '/console/tools/x']) {
      const res = await get(server, missing);
      assert.equal(res.status, 404, missing);
      assert.equal(res.headers['content-type'], 'text/html; charset=utf-8', missing);
    }
  });
});

describe('console in a browser: loopback without auth', () => {
  let upstream;
  let server;
  let browser;
  let dir;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-console-'));
    upstream = await startConsoleUpstream({ bulk: 1000 });
    server = await startHttpServer({
      config: [
        'audit:',
        '  enabled: true',
        `  path: ${path.join(dir, 'audit.jsonl')}`,
        'upstreams:',
        '  trips:',
        `    url: ${upstream.url}`,
        '    ping_interval_ms: 500',
        '    max_backoff_ms: 1000',
        '',
      ].join('\n'),
    });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
    await upstream?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('every page loads with no console error and no failed request, and axe finds no serious violation', async () => {
    // A call first, so the Calls page has a record to show.
    const client = await mcpClient(server);
    await client.callTool({ name: 'test_simple_text', arguments: {} });
    await client.close();

    const tab = await openTab(browser);
    await tab.page.goto(`${server.base}/console/`);
    await tab.page.waitForSelector('nav[aria-label="Console pages"]');
    assert.match(await textOf(tab.page, '.who'), /no auth, loopback/);
    const seen = await visitEveryPage(tab, 'loopback');
    assert.ok(seen.includes('overview'), seen.join(','));
    // A page reached by its own address (a reload on it) loads too.
    await tab.page.goto(`${server.base}/console/${seen.at(-1)}`);
    await tab.page.waitForSelector(READY[seen.at(-1)]);
    tab.assertClean('loopback');
    await tab.page.close();
  });

  it('Tools lists a catalog of a thousand tools drawing only the rows in view, and finds a tool by search', async () => {
    const tab = await openTab(browser);
    await tab.page.goto(`${server.base}/console/tools`);
    await tab.page.waitForSelector('[data-tool="bulk_0999"], [data-tool="bulk_0000"]');
    const total = Number((await textOf(tab.page, 'main [role="status"]')).match(/^([\d,]+) tools/)[1].replace(/,/g, ''));
    assert.ok(total > 1000, `${total} tools listed`);
    const drawn = async () => (await tab.page.$$('.vrow')).length;
    assert.ok((await drawn()) < 60, `${await drawn()} rows drawn of ${total}`);
    // The end of the list is reached by scrolling, still drawing only what is in view.
    await tab.page.$eval('.vlist', (list) => (list.scrollTop = list.scrollHeight));
    await tab.page.waitForFunction(() => document.querySelector('.vrow:last-child button')?.dataset.tool !== undefined &&
      [...document.querySelectorAll('.vrow')].some((row) => row.getAttribute('aria-posinset') === row.getAttribute('aria-setsize')));
    assert.ok((await drawn()) < 60);

    await tab.page.type('#tool-search', 'plan a trip for travellers');
    await tab.page.waitForFunction(() => /ranked for/.test(document.querySelector('main [role="status"]').textContent));
    const first = await tab.page.$eval('.vrow[aria-posinset="1"] button', (b) => b.dataset.tool);
    assert.equal(first, 'plan_trip');
    await tab.page.click('[data-tool="plan_trip"]');
    await tab.page.waitForSelector('#tool-title');
    assert.match(await textOf(tab.page, '#tool-title'), /Plan a trip/);
    // The input schema drawn as a tree: the nested object's fields, with their required marks.
    const schema = await tab.page.$eval('.schema-props', (ul) => ul.textContent);
    assert.match(schema, /trip \* \(required\) object/);
    assert.match(schema, /from \* \(required\) string/);
    assert.match(schema, /age \* \(required\) integer · ≥ 0/);
    await screenshot(tab.page, 'tools-plan-trip');
    tab.assertClean('tools');
    await tab.page.close();
  });

  it('a call made by an MCP client appears on Calls as it is made, opens its details, and filters apply', async (t) => {
    const tab = await openTab(browser);
    await tab.page.goto(`${server.base}/console/calls`);
    await tab.page.waitForSelector('.stream.live');
    assert.equal(await tab.page.$('[data-call="bulk_0517"]'), null);

    const client = await mcpClient(server);
    const result = await client.callTool({ name: 'bulk_0517', arguments: { n: 517 } });
    const answered = Date.now();
    assert.equal(result.content[0].text, '517');
    // The live stream brings it: no reload, no polling by the page.
    await tab.page.waitForSelector('[data-call="bulk_0517"]', { timeout: 10000 });
    t.diagnostic(`the record was on the page ${Date.now() - answered} ms after the call's answer`);

    await tab.page.click('[data-call="bulk_0517"]');
    await tab.page.waitForSelector('#call-title');
    assert.match(await textOf(tab.page, '#call-title'), /tools\/call bulk_0517 ok/);
    assert.match(await textOf(tab.page, 'section[aria-labelledby="call-title"] .facts'), /Trace idnone \(tracing off\)/);
    await assertAccessible(tab.page, 'call details');
    await screenshot(tab.page, 'calls-details');

    // A filter on another tool: the record is not listed, and later calls of other tools neither.
    await tab.page.type('#f-tool', 'plan_trip');
    await tab.page.click('form[aria-label="Filters"] button[type="submit"]');
    await tab.page.waitForFunction(() => !document.querySelector('[data-call="bulk_0517"]'));
    await client.callTool({ name: 'bulk_0001', arguments: {} });
    await client.callTool({ name: 'plan_trip', arguments: { trip: { from: 'Oslo', to: 'Rome' }, travellers: [{ name: 'Ada', age: 36 }] } });
    await tab.page.waitForSelector('[data-call="plan_trip"]', { timeout: 10000 });
    assert.equal(await tab.page.$('[data-call="bulk_0001"]'), null);
    await client.close();
    tab.assertClean('calls');
    await tab.page.close();
  });

  it('Calls reads a history longer than its first page in pages, and lists every record once', async () => {
    const client = await mcpClient(server);
    for (let i = 0; i < 1300; i += 50) {
      await Promise.all(Array.from({ length: 50 }, () => client.callTool({ name: 'test_simple_text', arguments: {} })));
    }
    await client.close();
    let expected = 0;
    await waitFor('the audit log to hold the calls', async () => {
      expected = (await (await fetch(`${server.base}/console/api/calls?limit=10000`)).json()).records.length;
      return expected >= 1300;
    }, 20000);

    const tab = await openTab(browser);
    await tab.page.goto(`${server.base}/console/calls`);
    const count = 'main p.muted[role="status"]';  // (the stream's state is a status too)
    const listed = async () => Number((await textOf(tab.page, count)).match(/^([\d,]+) record/)?.[1].replace(/,/g, '') ?? 0);
    await tab.page.waitForFunction((selector, n) => document.querySelector(selector)?.textContent.startsWith(`${n.toLocaleString('en')} record`),
      { timeout: 20000 }, count, expected).catch(async (e) => { throw new Error(`${e.message}: ${await textOf(tab.page, count)} of ${expected}`); });
    // Still that many once any later page would have come in: none was listed twice.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(await listed(), expected);
    // Newest first, in pages: a small first one, then older ones up to the exclusive `until`.
    const asked = await tab.page.evaluate(() => performance.getEntriesByType('resource')
      .map((e) => new URL(e.name)).filter((u) => u.pathname.endsWith('/api/calls')).map((u) => Object.fromEntries(u.searchParams)));
    assert.equal(asked[0].limit, '200');
    assert.equal(asked[0].until, undefined);
    assert.ok(asked.length >= 2 && asked.slice(1).every((q) => q.limit === '1000' && q.until), JSON.stringify(asked));
    // The last row is the oldest record.
    await tab.page.$eval('.vlist', (list) => (list.scrollTop = list.scrollHeight));
    await tab.page.waitForSelector(`.vrow[aria-posinset="${expected}"]`);
    tab.assertClean('calls history');
    await tab.page.close();
  });

  it('the playground refuses a bad value before sending, then calls a tool with nested arguments and shows its structured result', async () => {
    const tab = await openTab(browser);
    await tab.page.goto(`${server.base}/console/playground?tool=plan_trip`);
    await tab.page.waitForSelector('#field_2ftrip_2ffrom');
    // The form follows the schema: the nested object's fields, the enum with its default.
    assert.equal(await tab.page.$eval('#field_2fclass', (select) => select.selectedOptions[0].textContent), 'economy');
    await tab.page.type('#field_2ftrip_2ffrom', 'Oslo');
    await tab.page.type('#field_2ftrip_2fto', 'Rome');
    await tab.page.click('button::-p-text(Add to travellers)');
    await tab.page.type('#field_2ftravellers_2f0_2fname', 'Ada');
    await tab.page.type('#field_2ftravellers_2f0_2fage', '-3');
    await tab.page.click('button::-p-text(Call plan_trip)');
    await tab.page.waitForSelector('#argument-errors');
    assert.match(await textOf(tab.page, '#argument-errors'), /Not sent.*\/travellers\/0\/age must be at least 0/s);
    assert.match(await textOf(tab.page, '#field_2ftravellers_2f0_2fage-error'), /must be at least 0/);
    assert.ok(!tab.requests.some((r) => r.startsWith('POST ') && r.endsWith('/console/api/call')), 'nothing was sent');
    await assertAccessible(tab.page, 'playground with an error');
    await screenshot(tab.page, 'playground-refused');

    // The raw JSON beside the form says the same arguments.
    const raw = JSON.parse(await tab.page.$eval('#raw-arguments', (area) => area.value));
    assert.deepEqual(raw, { class: 'economy', trip: { from: 'Oslo', to: 'Rome' }, travellers: [{ name: 'Ada', age: -3 }] });

    await tab.page.$eval('#field_2ftravellers_2f0_2fage', (input) => (input.value = ''));
    await tab.page.type('#field_2ftravellers_2f0_2fage', '36');
    await tab.page.click('button::-p-text(Call plan_trip)');
    await tab.page.waitForSelector('.result .structured', { timeout: 10000 });
    const structured = JSON.parse(await textOf(tab.page, '.result .structured'));
    assert.deepEqual(structured, { summary: 'Oslo to Rome for Ada (36)', travellers: 1, class: 'economy' });
    assert.equal(await textOf(tab.page, '.result .schema-check'), "Matches the tool's outputSchema.");
    assert.match(await textOf(tab.page, '#result-title'), /ok/);
    assert.ok(tab.requests.some((r) => r === `POST ${server.base}/console/api/call`));
    await assertAccessible(tab.page, 'playground with a result');
    await screenshot(tab.page, 'playground-result');
    tab.assertClean('playground');
    await tab.page.close();
  });

  it('Sessions and tasks: a client\'s session is listed and ended from the page, a working task cancelled', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(server.url));
    const client = new Client({ name: 'console-browser-session', version: '2.5.0' }, { capabilities: {} });
    await client.connect(transport);
    const sessionId = transport.sessionId;
    assert.ok(sessionId, 'the client has a session');
    const worker = new Client({ name: 'console-browser-tasks', version: '1.0.0' }, { capabilities: {} });
    await worker.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    const { task } = await worker.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 30 }, task: { ttl: 60000 } } },
      CreateTaskResultSchema,
    );

    const tab = await openTab(browser);
    await tab.page.goto(`${server.base}/console/sessions`);
    const sessionRow = `tr[data-session="${sessionId}"]`;
    const taskRow = `tr[data-task="${task.taskId}"]`;
    await tab.page.waitForSelector(sessionRow, { timeout: 10000 });
    assert.match(await textOf(tab.page, sessionRow), /console-browser-session 2\.5\.0/);
    assert.match(await textOf(tab.page, sessionRow), /streamable_http/);
    await tab.page.waitForSelector(taskRow, { timeout: 10000 });
    assert.match(await textOf(tab.page, taskRow), /slow_compute/);
    assert.match(await textOf(tab.page, `${taskRow} .badge`), /working/);
    await assertAccessible(tab.page, 'sessions and tasks');
    await screenshot(tab.page, 'sessions-with-task');

    // End the session: its row goes, and the client's next request finds no session.
    await tab.page.click(`${sessionRow} button.danger`);
    await tab.page.waitForFunction((sel) => !document.querySelector(sel), {}, sessionRow);
    await assert.rejects(client.callTool({ name: 'test_simple_text', arguments: {} }), 'the session was ended');

    // Cancel the task: its row goes, and its client reads it as cancelled by an operator.
    await tab.page.click(`${taskRow} button.danger`);
    await tab.page.waitForFunction((sel) => !document.querySelector(sel), {}, taskRow);
    const status = await worker.experimental.tasks.getTask(task.taskId);
    assert.equal(status.status, 'cancelled');
    assert.match(status.statusMessage ?? '', /operator/);

    await client.close().catch(() => {});
    await worker.close();
    tab.assertClean('sessions and tasks');
    await tab.page.close();
  });

  it('stopping an upstream turns it red on the Overview, and it recovers', async () => {
    const tab = await openTab(browser);
    await tab.page.goto(`${server.base}/console/overview`);
    const badge = 'tr[data-source="trips"] .badge';
    await tab.page.waitForSelector(badge);
    assert.equal(await textOf(tab.page, badge), 'healthy');
    // The charts' library is a chunk of its own, read when the Overview draws its first chart.
    await tab.page.waitForSelector('.chart .uplot canvas');

    await upstream.stop();
    // A call finds it gone (the gateway learns of it from its own traffic as well as its checks).
    const client = await mcpClient(server);
    const failed = await client.callTool({ name: 'plan_trip', arguments: { trip: { from: 'A', to: 'B' }, travellers: [{ name: 'x', age: 1 }] } });
    assert.equal(failed.isError, true);
    await tab.page.waitForSelector(`${badge}.state-down`, { timeout: 20000 });
    assert.equal(await textOf(tab.page, badge), 'down');
    await screenshot(tab.page, 'overview-upstream-down');

    await upstream.start();
    await waitFor('a call through the restarted upstream', async () => {
      const result = await client.callTool({ name: 'plan_trip', arguments: { trip: { from: 'A', to: 'B' }, travellers: [{ name: 'x', age: 1 }] } });
      return !result.isError;
    }, 20000);
    await tab.page.waitForSelector(`${badge}.state-healthy`, { timeout: 20000 });
    assert.equal(await textOf(tab.page, badge), 'healthy');
    await client.close();
    tab.assertClean('overview');
    await tab.page.close();
  });
});

describe('console in a browser: a reload after a catalog change', () => {
  it('Configuration\'s reload shows the tools added, changed and removed per source', async (t) => {
    const fixture = await startCatalogFixture({ tools: 20 });
    t.after(() => fixture.close());
    const server = await startHttpServer({
      packs: '',
      env: { AGENT_PAYMENT_API_URL: fixture.url, AGENT_PAYMENT_API_KEY: fixture.apiKey, AGENT_PAYMENT_BUDGET_KEY: fixture.budgetKey },
      config: `rest:\n  shop:\n    preset: agentpmt\n    base_url: ${fixture.url}\n    refresh_interval_s: 0\nreload:\n  min_interval_s: 0\n`,
    });
    t.after(() => server.stop());
    const browser = await launchBrowser();
    t.after(() => browser.close());
    await waitFor('the catalog', async () => {
      const b = await (await fetch(`${server.base}/console/api/tools?source=shop`)).json();
      return b.tools.some((tool) => tool.name === 'word-count');
    });

    const tab = await openTab(browser);
    await tab.page.goto(`${server.base}/console/configuration`);
    await tab.page.waitForSelector('#effective-title');
    // Every key as it takes effect: what the file sets, defaults on request, filtered by a text.
    await tab.page.waitForSelector('tr[data-key="rest.shop.base_url"]');
    assert.equal(await tab.page.$('tr[data-key="http.max_body_bytes"]'), null, 'defaults hidden at first');
    await tab.page.type('#keys-filter', 'max_body');
    await tab.page.click('#keys-defaults');
    await tab.page.waitForSelector('tr[data-key="http.max_body_bytes"]');
    const filtered = await tab.page.$$eval('.effective-keys tbody tr', (rows) => rows.map((r) => r.dataset.key));
    assert.ok(filtered.every((key) => key.includes('max_body')), filtered.join(' '));
    assert.match(await textOf(tab.page, 'tr[data-key="http.max_body_bytes"]'), /default/);
    await assertAccessible(tab.page, 'configuration keys');
    const row = 'tr[data-source="shop"]';
    // Nothing changed yet: the source is listed with nothing added, changed or removed.
    await tab.page.click('button::-p-text(Reload now)');
    await tab.page.waitForSelector(row, { timeout: 35000 });
    assert.match(await textOf(tab.page, '.reload-outcome'), /Reload done/);
    for (const cell of ['added', 'changed', 'removed']) assert.equal(await textOf(tab.page, `${row} .${cell}`), '–', cell);

    // The catalog changes: a tool added, one's description changed, one removed.
    fixture.changeCatalog({
      remove: [SPECIAL.wordCount, SPECIAL.noParams],
      add: [
        fixture.entry('newproduct0000000000000001', 'Fresh Tool', 'Just added.', { type: 'object', properties: {} }),
        fixture.entry(SPECIAL.wordCount, 'Word Count', 'Counts the words of a text, now in any language.', {
          type: 'object', properties: { text: { type: 'string', required: true } },
        }),
      ],
    });
    await tab.page.click('button::-p-text(Reload now)');
    await tab.page.waitForFunction((sel) => document.querySelector(`${sel} .added`)?.textContent === 'fresh-tool', { timeout: 35000 }, row);
    assert.equal(await textOf(tab.page, `${row} .changed`), 'word-count');
    assert.equal(await textOf(tab.page, `${row} .removed`), 'server-time');
    assert.match(await textOf(tab.page, '.reload-outcome'), /Reload done/);
    await assertAccessible(tab.page, 'configuration after a reload');
    await screenshot(tab.page, 'configuration-reload');
    tab.assertClean('configuration');
    await tab.page.close();
  });
});

describe('console in a browser: bearer tokens and OAuth', () => {
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
    env.browser = await launchBrowser();
  });
  after(async () => {
    await env.browser?.close();
    await env.server?.stop();
    await env.as?.stop();
  });

  it('without a credential the page asks for one; a wrong token is refused (401), the operator\'s opens every page', async () => {
    const { server, browser } = env;
    const tab = await openTab(browser);
    tab.expectStatus('/console/api/me', 401);
    await tab.page.goto(`${server.base}/console/`);
    await tab.page.waitForSelector('#token');
    assert.match(await textOf(tab.page, '[role="alert"]'), /credential is needed \(401\)/);
    await assertAccessible(tab.page, 'token prompt');
    await screenshot(tab.page, 'auth-token-prompt');

    await tab.page.type('#token', 'not-the-token');
    await signIn(tab.page);
    assert.match(await textOf(tab.page, '[role="alert"]'), /credential is needed \(401\)/);
    assert.equal(await tab.page.$('nav[aria-label="Console pages"]'), null, 'no page for a wrong token');

    await tab.page.$eval('#token', (input) => (input.value = ''));
    await tab.page.type('#token', TOKEN);
    await signIn(tab.page);
    await tab.page.waitForSelector('nav[aria-label="Console pages"]');
    assert.match(await textOf(tab.page, '.who'), /bearer:[0-9a-f]+ \(bearer\)/);
    // The token stays in this tab's sessionStorage: a reload keeps the operator in.
    await tab.page.reload();
    await tab.page.waitForSelector('nav[aria-label="Console pages"]');
    await visitEveryPage(tab, 'bearer');
    tab.assertClean('bearer');
    await tab.page.close();
  });

  it('an OAuth token without the operator scope is refused (403 shown); with it, every page loads', async () => {
    const { as, server, browser, resource } = env;
    const tab = await openTab(browser);
    tab.expectStatus('/console/api/me', 401);
    tab.expectStatus('/console/api/me', 403);
    await tab.page.goto(`${server.base}/console/`);
    await tab.page.waitForSelector('#token');
    await tab.page.type('#token', as.token({ sub: 'alice', aud: resource, scope: 'mcp:tools' }));
    await signIn(tab.page);
    assert.match(await textOf(tab.page, '[role="alert"]'), /Refused \(403\)/);
    assert.match(await textOf(tab.page, '[role="alert"]'), /toolport:operator/);
    await screenshot(tab.page, 'oauth-refused');

    await tab.page.$eval('#token', (input) => (input.value = ''));
    await tab.page.type('#token', as.token({ sub: 'olga', aud: resource, scope: 'mcp:tools toolport:operator' }));
    await signIn(tab.page);
    await tab.page.waitForSelector('nav[aria-label="Console pages"]');
    assert.match(await textOf(tab.page, '.who'), /oauth/);
    await visitEveryPage(tab, 'oauth');
    tab.assertClean('oauth');
    await tab.page.close();
  });
});
