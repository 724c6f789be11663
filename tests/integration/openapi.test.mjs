// The OpenAPI import in the real binary: `openapi:` sources on the inventory document of
// tests/fixtures/openapi, served over Streamable HTTP to the official SDK client, with the
// fixture's own view of every request (path, query, headers, body, credentials). The
// document is read from a file (with base_url) and from the fixture's URL (its relative
// server URL taken against the document's address), including a URL that only answers
// after start-up.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import os from 'node:os';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startHttpServer, freePort, sleep, runToolport } from './lib/harness.mjs';
import { startInventoryFixture } from '../fixtures/openapi/server.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIXTURES = path.resolve(HERE, '../fixtures/openapi');
const DOCUMENT = path.join(FIXTURES, 'inventory.yaml');
const KEY = 'it-inventory-key';
const TOKEN = 'it-inventory-token';
const CREDENTIALS = { INVENTORY_API_KEY: KEY, INVENTORY_BEARER: TOKEN };

async function connect(server) {
  const client = new Client({ name: 'toolport-it-openapi', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  return client;
}

const code = (result) => result.structuredContent?.error_code ?? 'OK';
const byName = (tools) => Object.fromEntries(tools.map((t) => [t.name, t]));

// Polls tools/list until `name` is there (a URL document's tools come when it has been read).
async function waitForTool(client, name, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { tools } = await client.listTools();
    if (tools.some((t) => t.name === name)) return tools;
    if (Date.now() > deadline) throw new Error(`no tool ${name} after ${timeoutMs} ms: ${tools.map((t) => t.name).join(', ')}`);
    await sleep(100);
  }
}

describe('openapi import against the inventory fixture', () => {
  let fixture;
  let server;
  let client;

  before(async () => {
    fixture = await startInventoryFixture({ apiKey: KEY, token: TOKEN });
    server = await startHttpServer({
      config: [
        'openapi:',
        '  inventory:',
        `    document: ${DOCUMENT}`,
        `    base_url: ${fixture.url}/v1`,
        '    tool_prefix: inv_',
        '    exclude_operations: [deleteItem]',
        // An API's answers are cached only when the operator says so (issue 29).
        'sources:',
        '  inventory: {cache: {mode: read_only}}',
        '',
      ].join('\n'),
      env: CREDENTIALS,
    });
    client = await connect(server);
  });
  after(async () => {
    await client?.close();
    await server?.stop();
    await fixture?.close();
  });

  it('lists the operations as tools with merged schemas and hints', async () => {
    const tools = byName((await client.listTools()).tools);
    const ours = Object.keys(tools).filter((n) => n.startsWith('inv_')).sort();
    assert.deepEqual(ours, ['inv_addNotes', 'inv_createItem', 'inv_explode', 'inv_getCategory', 'inv_getFile',
      'inv_getItem', 'inv_getStatus', 'inv_listItems', 'inv_updateItem']);

    const update = tools.inv_updateItem;
    assert.deepEqual(Object.keys(update.inputSchema.properties).sort(), ['If-Match', 'itemId', 'name', 'parent', 'price', 'tags']);
    assert.deepEqual(update.inputSchema.required, ['itemId', 'name']);
    assert.deepEqual(update.inputSchema.properties.parent.type, ['string', 'null']);
    assert.equal(update.annotations.idempotentHint, true);
    assert.equal(update.annotations.readOnlyHint, undefined);

    const get = tools.inv_getItem;
    assert.equal(get.annotations.readOnlyHint, true);
    assert.equal(get.annotations.openWorldHint, true);
    assert.equal(get.outputSchema.type, 'object');
    // The API's object, or the error fields of an isError result.
    assert.equal(get.outputSchema.anyOf.length, 2);
    assert.deepEqual(get.outputSchema.anyOf[0].allOf[1].required, ['id']);
    assert.deepEqual(get.outputSchema.anyOf[1].required, ['error', 'error_code']);
    assert.equal(get.title, 'One item');

    assert.equal(tools.inv_addNotes.inputSchema.properties.body.type, 'array');
    assert.deepEqual(tools.inv_addNotes.inputSchema.required, ['itemId', 'body']);
    assert.equal(tools.inv_addNotes.outputSchema, undefined);
    // The recursive category is cut one level down.
    const child = tools.inv_getCategory.outputSchema.anyOf[0].properties.children.items;
    assert.match(child.description, /recursive/);
  });

  it('sends path, query, header and body arguments where the document says, with the credentials', async () => {
    fixture.reset();
    const list = await client.callTool({ name: 'inv_listItems', arguments: { tag: ['toys', 'tools'], ids: ['2', '3'], limit: 5, 'X-Request-Id': 'req-1' } });
    assert.equal(code(list), 'OK', JSON.stringify(list));
    assert.equal(list.structuredContent.total, 2);
    assert.equal(list._meta.downstream_api_calls, 1);

    const created = await client.callTool({ name: 'inv_createItem', arguments: { name: 'Kite', price: 3, tags: ['toys'] } });
    assert.equal(code(created), 'OK', JSON.stringify(created));
    assert.equal(created.structuredContent.name, 'Kite');

    const updated = await client.callTool({ name: 'inv_updateItem', arguments: { itemId: '2', 'If-Match': 'v7', name: 'Gizmo', parent: null } });
    assert.equal(code(updated), 'OK', JSON.stringify(updated));
    assert.equal(updated.structuredContent.name, 'Gizmo');

    const notes = await client.callTool({ name: 'inv_addNotes', arguments: { itemId: '1', body: ['fragile', 'keep dry'] } });
    assert.deepEqual(JSON.parse(notes.content[0].text), ['fragile', 'keep dry']);

    const file = await client.callTool({ name: 'inv_getFile', arguments: { name: '../x?y#z' } });
    assert.equal(file.content[0].text, 'contents of ../x?y#z');

    const status = await client.callTool({ name: 'inv_getStatus', arguments: {} });
    assert.deepEqual(status.structuredContent, { ok: true });

    const [l, c, u, n, f, s] = fixture.stats().requests;
    assert.equal(l.method, 'GET');
    assert.equal(l.raw_path, '/v1/items');
    assert.equal(l.raw_query, 'tag=toys&tag=tools&ids=2,3&limit=5');
    assert.equal(l.headers['x-request-id'], 'req-1');
    assert.equal(l.headers['x-api-key'], KEY);
    assert.equal(l.headers.authorization, undefined);

    assert.equal(c.method, 'POST');
    assert.equal(c.headers.authorization, `Bearer ${TOKEN}`);
    assert.equal(c.headers['x-api-key'], undefined);
    assert.equal(c.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(c.body), { name: 'Kite', price: 3, tags: ['toys'] });

    assert.equal(u.method, 'PUT');
    assert.equal(u.raw_path, '/v1/items/2');
    assert.equal(u.headers['if-match'], 'v7');
    assert.deepEqual(JSON.parse(u.body), { name: 'Gizmo', parent: null });

    assert.equal(n.raw_path, '/v1/items/1/notes');
    assert.deepEqual(JSON.parse(n.body), ['fragile', 'keep dry']);

    // The hostile name stayed one segment of the path.
    assert.equal(f.raw_path, '/v1/files/..%2Fx%3Fy%23z');
    assert.equal(s.raw_path, '/v1/status');
    assert.equal(s.headers['x-api-key'], undefined);  // no security: no credentials sent
    assert.equal(fixture.stats().count, 6);
  });

  it('caches the answers of read-only operations only, until an operation that writes', async () => {
    fixture.reset();
    for (let i = 0; i < 2; i++) {
      const category = await client.callTool({ name: 'inv_getCategory', arguments: { categoryId: 7 } });
      assert.equal(category.structuredContent.name, 'category 7');
      const notes = await client.callTool({ name: 'inv_addNotes', arguments: { itemId: '3', body: ['again'] } });
      assert.equal(code(notes), 'OK', JSON.stringify(notes));
    }
    const again = await client.callTool({ name: 'inv_getCategory', arguments: { categoryId: 7 } });
    assert.equal(again._meta.cache_status, 'miss');
    assert.equal((await client.callTool({ name: 'inv_getCategory', arguments: { categoryId: 7 } }))._meta.cache_status, 'hit');
    // Every POST (not read-only) invalidated the source's cached reads.
    const paths = fixture.stats().requests.map((r) => `${r.method} ${r.raw_path}`);
    assert.deepEqual(paths, ['GET /v1/categories/7', 'POST /v1/items/3/notes', 'GET /v1/categories/7',
      'POST /v1/items/3/notes', 'GET /v1/categories/7']);
  });

  it('refuses bad arguments before anything reaches the API', async () => {
    fixture.reset();
    const tooMany = await client.callTool({ name: 'inv_listItems', arguments: { limit: 500 } });
    assert.equal(tooMany.isError, true);
    assert.equal(code(tooMany), 'INVALID_ARGUMENT');
    const unknown = await client.callTool({ name: 'inv_getItem', arguments: { itemId: '1', itemID: '2' } });
    assert.equal(unknown.isError, true);
    const missing = await client.callTool({ name: 'inv_updateItem', arguments: { itemId: '1' } });
    assert.equal(missing.isError, true);
    assert.match(code(missing), /MISSING_PARAMETER|INVALID_ARGUMENT/);
    assert.equal(fixture.stats().count, 0);
  });

  it('turns API failures into tool errors with the API message and no secret', async () => {
    fixture.reset();
    const missing = await client.callTool({ name: 'inv_getItem', arguments: { itemId: 'nope' } });
    assert.equal(missing.isError, true);
    assert.equal(code(missing), 'NOT_FOUND');
    assert.match(missing.structuredContent.error, /no item nope/);

    const broken = await client.callTool({ name: 'inv_explode', arguments: {} });
    assert.equal(code(broken), 'UPSTREAM_ERROR');
    assert.equal(broken.structuredContent.transient, true);
    assert.match(broken.structuredContent.error, /the database is on fire/);

    fixture.nextResponse({ status: 401, body: { code: 401, message: `key ${KEY} was revoked` } });
    const refused = await client.callTool({ name: 'inv_getItem', arguments: { itemId: '3' } });
    assert.equal(code(refused), 'INVALID_ARGUMENT');
    assert.ok(!JSON.stringify(refused).includes(KEY), JSON.stringify(refused));
    assert.match(refused.structuredContent.error, /\[redacted\] was revoked/);
    assert.match(refused.structuredContent.suggestion, /INVENTORY_API_KEY/);

    fixture.nextResponse({ status: 429, headers: { 'Retry-After': '3' }, body: { message: 'slow down' } });
    const limited = await client.callTool({ name: 'inv_getCategory', arguments: { categoryId: 4 } });
    assert.equal(code(limited), 'RATE_LIMITED');
    assert.equal(limited.structuredContent.retry_after_ms, 3000);
    assert.ok(!server.logs().includes(KEY), 'the key reached the logs');
  });

  it('redacts the credentials an API echoes in a successful answer: structuredContent, its text, and text answers', async () => {
    fixture.reset();
    fixture.nextResponse({ status: 200, body: { id: '1', name: `echo of ${KEY}`, tags: [KEY], parent: null } });
    const item = await client.callTool({ name: 'inv_getItem', arguments: { itemId: '1' } });
    assert.equal(code(item), 'OK', JSON.stringify(item));
    assert.deepEqual(item.structuredContent, { id: '1', name: 'echo of [redacted]', tags: ['[redacted]'], parent: null });
    assert.deepEqual(JSON.parse(item.content[0].text), item.structuredContent);
    fixture.nextResponse({ status: 200, body: `the key you sent: ${KEY}` });
    const file = await client.callTool({ name: 'inv_getFile', arguments: { name: 'whoami.txt' } });
    assert.equal(file.content[0].text, 'the key you sent: [redacted]');
    // The bearer token of another operation, echoed: redacted too.
    fixture.nextResponse({ status: 201, body: { id: '9', name: `token ${TOKEN}`, tags: [], parent: null } });
    const created = await client.callTool({ name: 'inv_createItem', arguments: { name: 'Kite' } });
    assert.equal(created.structuredContent.name, 'token [redacted]');
    for (const result of [item, file, created]) {
      const wire = JSON.stringify(result);
      assert.ok(!wire.includes(KEY) && !wire.includes(TOKEN), wire);
    }
  });

  it('answers MISSING_API_KEY naming the variable when the server has no credential', async (t) => {
    const bare = await startHttpServer({
      config: `openapi:\n  inventory:\n    document: ${DOCUMENT}\n    base_url: ${fixture.url}/v1\n`,
      env: { INVENTORY_API_KEY: '', INVENTORY_BEARER: '' },
    });
    t.after(() => bare.stop());
    const c = await connect(bare);
    t.after(() => c.close());
    fixture.reset();
    const result = await c.callTool({ name: 'getItem', arguments: { itemId: '1' } });
    assert.equal(code(result), 'MISSING_API_KEY');
    assert.match(result.structuredContent.error, /INVENTORY_API_KEY/);
    assert.equal(fixture.stats().count, 0);
    // Said at start-up too, before any call: each variable that is not set, once.
    const logs = bare.logs();
    assert.match(logs, /openapi inventory: the environment variable INVENTORY_API_KEY \(security scheme \w+\) is not set: \d+ operations? that needs? it answer MISSING_API_KEY/);
    assert.match(logs, /the environment variable INVENTORY_BEARER \(security scheme \w+\) is not set/);
    assert.equal(logs.match(/INVENTORY_API_KEY \(security scheme/g).length, 1, logs);
  });
});

describe('openapi import from a URL', () => {
  it('reads the document and the file it refers to from the fixture, and calls the API there', async (t) => {
    const fixture = await startInventoryFixture({ apiKey: KEY, token: TOKEN });
    t.after(() => fixture.close());
    const server = await startHttpServer({
      config: `openapi:\n  remote:\n    document: ${fixture.url}/openapi.yaml\n    credentials: {api_key: MY_INVENTORY_KEY}\n`,
      env: { MY_INVENTORY_KEY: KEY },
    });
    t.after(() => server.stop());
    const client = await connect(server);
    t.after(() => client.close());
    const tools = byName(await waitForTool(client, 'getItem'));
    // The error schema of common.yaml came from the fixture too: no tool was left out.
    assert.equal(Object.keys(tools).filter((n) => ['listItems', 'createItem', 'deleteItem', 'explode'].includes(n)).length, 4);
    const item = await client.callTool({ name: 'getItem', arguments: { itemId: '1' } });
    assert.equal(code(item), 'OK', JSON.stringify(item));
    assert.equal(item.structuredContent.name, 'Widget');
    const seen = fixture.stats().requests.at(-1);
    assert.equal(seen.raw_path, '/v1/items/1');
    assert.equal(seen.headers['x-api-key'], KEY);
    // One warning only: the bearer scheme's variable (REMOTE_BEARER) is not set.
    const warnings = server.logs().split('\n').filter((line) => /warn.*openapi remote/.test(line));
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0], /the environment variable REMOTE_BEARER \(security scheme bearer\) is not set/);

    // The in-process CLI waits for the first fetch before it lists.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-openapi-list-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const config = path.join(dir, 'remote.yaml');
    writeFileSync(config, `openapi:\n  remote:\n    document: ${fixture.url}/openapi.yaml\n`);
    const listed = await runToolport(['list', '--config', config]);
    assert.equal(listed.status, 0, listed.stderr);
    assert.match(listed.stdout, /getItem/);
    assert.match(listed.stdout, /10 tools/);
  });

  it('serves the rest while the document is unreachable, says so on /health, and adds the tools when it answers', async (t) => {
    const port = await freePort();
    const server = await startHttpServer({
      config: `openapi:\n  late:\n    document: http://127.0.0.1:${port}/openapi.yaml\n`,
      env: { LATE_API_KEY: KEY },
    });
    t.after(() => server.stop());
    const client = await connect(server);
    t.after(() => client.close());
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    const before = await client.listTools();
    assert.ok(!before.tools.some((tool) => tool.name === 'getItem'));
    const health = await (await fetch(`${server.base}/health`)).json();
    assert.equal(health.status, 'degraded', JSON.stringify(health));
    assert.match(JSON.stringify(health.services), /late/);
    assert.match(health.services.late, /^unavailable: /);

    const fixture = await startInventoryFixture({ port, apiKey: KEY, token: TOKEN });
    t.after(() => fixture.close());
    await waitForTool(client, 'getItem', 15000);
    // (Read before any call: the first call puts the service's circuit breaker under the
    // same name on /health.)
    const after = await (await fetch(`${server.base}/health`)).json();
    assert.equal(after.services.late, 'available (10 tools)');
    assert.equal(after.status, 'healthy');
    const status = await client.callTool({ name: 'getStatus', arguments: {} });
    assert.deepEqual(status.structuredContent, { ok: true });
    await sleep(100);
    assert.ok(changed >= 1, 'no notifications/tools/list_changed');
  });
});

describe('openapi import: what a document may refer to, and where its calls go', () => {
  it('refuses $refs out of the document\'s folder (.., %2e%2e, a symbolic link): nothing of the file reaches tools/list', async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-openapi-refs-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(path.join(dir, 'secret.json'), JSON.stringify({ type: 'object', description: 'TOP-SECRET-CONTENT', properties: { leaked: { type: 'string' } } }));
    mkdirSync(path.join(dir, 'api'));
    symlinkSync(path.join(dir, 'secret.json'), path.join(dir, 'api', 'link.json'));
    const op = (id, ref) => `  /${id}:\n    get:\n      operationId: ${id}\n      responses: {'200': {description: ok, content: {application/json: {schema: {$ref: '${ref}'}}}}}\n`;
    const document = path.join(dir, 'api', 'api.yaml');
    writeFileSync(document, "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n" + op('dots', '../secret.json') +
      op('encoded', '%2e%2e/secret.json') + op('symlink', 'link.json') +
      "  /fine:\n    get:\n      operationId: fine\n      responses: {'200': {description: ok}}\n");
    const server = await startHttpServer({ config: `openapi:\n  refs:\n    document: ${document}\n    base_url: http://127.0.0.1:9\n` });
    t.after(() => server.stop());
    const client = await connect(server);
    t.after(() => client.close());
    const tools = (await client.listTools()).tools;
    const names = tools.map((tool) => tool.name);
    assert.ok(names.includes('fine'), names.join(', '));
    for (const refused of ['dots', 'encoded', 'symlink']) assert.ok(!names.includes(refused), `${refused} was served`);
    assert.ok(!JSON.stringify(tools).includes('TOP-SECRET'), 'the file outside reached tools/list');
    const logs = server.logs();
    assert.match(logs, /GET \/dots left out: \\"\.\.\/secret\.json\\" is outside the document's folder/);
    assert.match(logs, /GET \/encoded left out: \\"\.\.\/secret\.json\\" is outside the document's folder/);
    assert.match(logs, /GET \/symlink left out: \\"link\.json\\" is a symbolic link out of the document's folder; refused/);
    assert.ok(!logs.includes('TOP-SECRET'));
    assert.ok(!/left out:[^\n]*toolport-openapi-refs-/.test(logs), 'a warning named the absolute path');
  });

  it('warns once, naming both hosts and never the key, when a URL document sends its calls to another host', async (t) => {
    // The API on 127.0.0.2, the document served from 127.0.0.1 with that server URL.
    const fixture = await startInventoryFixture({ host: '127.0.0.2', apiKey: KEY, token: TOKEN });
    t.after(() => fixture.close());
    const text = readFileSync(DOCUMENT, 'utf8').replace(/servers:\n  - url: \/v1\n/, `servers:\n  - url: ${fixture.url}/v1\n`);
    assert.notEqual(text, readFileSync(DOCUMENT, 'utf8'));
    const documents = http.createServer((req, res) => {
      const body = req.url === '/openapi.yaml' ? text : req.url === '/common.yaml' ? readFileSync(path.join(FIXTURES, 'common.yaml'), 'utf8') : null;
      res.writeHead(body === null ? 404 : 200, { 'Content-Type': 'application/yaml' });
      res.end(body ?? '');
    });
    await new Promise((resolve) => documents.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise((resolve) => documents.close(resolve)));
    const server = await startHttpServer({
      config: `openapi:\n  remote:\n    document: http://127.0.0.1:${documents.address().port}/openapi.yaml\n    credentials: {api_key: MY_INVENTORY_KEY}\n`,
      env: { MY_INVENTORY_KEY: KEY },
    });
    t.after(() => server.stop());
    const client = await connect(server);
    t.after(() => client.close());
    await waitForTool(client, 'getItem');
    const item = await client.callTool({ name: 'getItem', arguments: { itemId: '1' } });
    assert.equal(code(item), 'OK', JSON.stringify(item));
    assert.equal(fixture.stats().requests.at(-1).headers['x-api-key'], KEY);
    const warning = /openapi remote: the document, served by 127\.0\.0\.1, sends its calls and their credentials to another host, 127\.0\.0\.2/g;
    assert.equal(server.logs().match(warning)?.length, 1, server.logs());
    // A reload reads the document again: no second warning.
    server.child.kill('SIGHUP');
    await sleep(500);
    assert.equal(server.logs().match(warning)?.length, 1);
    assert.ok(!server.logs().includes(KEY), 'the key reached the logs');
  });
});

describe('openapi import: reloads, a missing file, --openapi', () => {
  let fixture;
  let dir;
  before(async () => {
    fixture = await startInventoryFixture({ apiKey: KEY, token: TOKEN });
    dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-openapi-'));
  });
  after(async () => {
    await fixture?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('re-reads the document on SIGHUP and `toolport reload`, announcing only real changes', async (t) => {
    const document = path.join(dir, 'inventory.yaml');
    copyFileSync(DOCUMENT, document);
    copyFileSync(path.join(FIXTURES, 'common.yaml'), path.join(dir, 'common.yaml'));
    const server = await startHttpServer({
      // Reloads back to back: no minimum interval (one at a time still holds).
      config: `reload:\n  min_interval_s: 0\nopenapi:\n  inventory:\n    document: ${document}\n    base_url: ${fixture.url}/v1\n`,
      env: CREDENTIALS,
    });
    t.after(() => server.stop());
    const client = await connect(server);
    t.after(() => client.close());
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    await client.listTools();

    // The same document: read again, nothing announced.
    server.child.kill('SIGHUP');
    await sleep(500);
    assert.equal(changed, 0);

    // An operation renamed: the client hears of it and sees the new name.
    writeFileSync(document, readFileSync(document, 'utf8').replace('operationId: explode', 'operationId: blowUp'));
    const reload = await runToolport(['reload', '--url', server.base]);
    assert.equal(reload.status, 0, reload.stderr);
    const deadline = Date.now() + 5000;
    while (changed === 0 && Date.now() < deadline) await sleep(50);
    assert.equal(changed, 1);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(names.includes('blowUp') && !names.includes('explode'), names.join(', '));

    // A broken document keeps the tools of the last good one.
    writeFileSync(document, 'openapi: [\n');
    server.child.kill('SIGHUP');
    await sleep(500);
    assert.ok((await client.listTools()).tools.some((tool) => tool.name === 'blowUp'));
    const health = await (await fetch(`${server.base}/health`)).json();
    assert.match(health.services.inventory, /^stale \(the last read failed: /);
  });

  it('starts without a document that is missing, and serves its tools once it is there', async (t) => {
    const sub = mkdtempSync(path.join(dir, 'late-'));
    const document = path.join(sub, 'inventory.yaml');
    const server = await startHttpServer({
      config: `openapi:\n  inventory:\n    document: ${document}\n    base_url: ${fixture.url}/v1\n`,
      env: CREDENTIALS,
    });
    t.after(() => server.stop());
    const client = await connect(server);
    t.after(() => client.close());
    assert.ok(!(await client.listTools()).tools.some((tool) => tool.name === 'getItem'));
    const health = await (await fetch(`${server.base}/health`)).json();
    assert.equal(health.status, 'degraded');
    assert.match(health.services.inventory, /^unavailable: inventory\.yaml: cannot be read/);
    assert.ok(!health.services.inventory.includes(sub), `/health names the document's path: ${health.services.inventory}`);
    assert.match(server.logs(), /openapi inventory: the document could not be used/);

    copyFileSync(path.join(FIXTURES, 'common.yaml'), path.join(sub, 'common.yaml'));
    copyFileSync(DOCUMENT, document);
    await waitForTool(client, 'getItem', 10000);
    const item = await client.callTool({ name: 'getItem', arguments: { itemId: '2' } });
    assert.equal(item.structuredContent.name, 'Gadget');
  });

  it('serves a document named on the command line (--openapi URL)', async (t) => {
    const server = await startHttpServer({
      extraArgs: ['--openapi', `${fixture.url}/openapi.yaml`],
      env: { OPENAPI_API_KEY: KEY },
    });
    t.after(() => server.stop());
    const client = await connect(server);
    t.after(() => client.close());
    await waitForTool(client, 'listItems');
    const list = await client.callTool({ name: 'listItems', arguments: { tag: ['tools'] } });
    assert.equal(code(list), 'OK', JSON.stringify(list));
    assert.equal(list.structuredContent.total, 2);
  });
});
