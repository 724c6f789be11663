// Issue 29, defect 5: the cache never serves stale or another user's data by default.
//  - The results of sources Toolport does not own (OpenAPI here, REST catalogs, gateway
//    upstreams) are not cached unless the operator turns it on: listItems → createItem →
//    listItems sees the new record; server-everything's get-env through the gateway is
//    not served from one client's call to another.
//  - Turned on (per source), a call of a tool that is not read-only invalidates the cached
//    reads of its source: the new record is seen, a deleted one is gone; per caller.
//  - Through Redis, a write on one replica invalidates what the other replica caches.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpServer, waitFor, freePort, REDIS, startRedis, stopRedis } from './lib/harness.mjs';
import { EVERYTHING, NODE, yamlString } from './lib/gateway_setup.mjs';
import { startInventoryFixture } from '../fixtures/openapi/server.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DOCUMENT = path.resolve(HERE, '../fixtures/openapi/inventory.yaml');
const CREDENTIALS = { INVENTORY_API_KEY: 'k', INVENTORY_BEARER: 't' };

async function connect(server, headers = {}) {
  const client = new Client({ name: 'toolport-it-cache', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers } }));
  return client;
}

const names = (result) => (result.structuredContent?.items ?? []).map((i) => i.name).sort();
const openapi = (name, url, prefix) => [
  `  ${name}:`,
  `    document: ${DOCUMENT}`,
  `    base_url: ${url}/v1`,
  `    tool_prefix: ${prefix}`,
];

describe('the cache on sources Toolport does not own', () => {
  let fixture;
  let server;
  let client;
  let other;

  before(async () => {
    fixture = await startInventoryFixture({ apiKey: 'k', token: 't' });
    server = await startHttpServer({
      packs: 'conformance',
      // Each source reads its credentials from <NAME>_API_KEY and <NAME>_BEARER.
      env: { ...CREDENTIALS, CACHED_API_KEY: 'k', CACHED_BEARER: 't' },
      config: [
        'openapi:',
        ...openapi('inventory', fixture.url, 'inv_'),
        ...openapi('cached', fixture.url, 'c_'),
        'sources:',
        '  cached: {cache: {mode: read_only}}',
        'upstreams:',
        '  everything:',
        `    command: ${yamlString(NODE)}`,
        `    args: [${yamlString(EVERYTHING)}, stdio]`,
        '',
      ].join('\n'),
    });
    client = await connect(server);
    other = await connect(server);
    await waitFor('the upstream', async () => (await client.listTools()).tools.some((t) => t.name === 'get-env'), 20000);
  });
  after(async () => {
    await client?.close();
    await other?.close();
    await server?.stop();
    await fixture?.close();
  });

  it('by default an OpenAPI read is not cached: listItems after createItem sees the new record', async () => {
    fixture.reset();
    const before = await client.callTool({ name: 'inv_listItems', arguments: {} });
    assert.deepEqual(names(before), ['Doll', 'Gadget', 'Widget']);
    const created = await client.callTool({ name: 'inv_createItem', arguments: { name: 'Kite', price: 3 } });
    assert.notEqual(created.isError, true, JSON.stringify(created));
    const after = await client.callTool({ name: 'inv_listItems', arguments: {} });
    assert.deepEqual(names(after), ['Doll', 'Gadget', 'Kite', 'Widget']);
    assert.notEqual(after._meta.cache_status, 'hit');
  });

  it("by default the gateway serves no client another's cached get-env", async () => {
    const first = await client.callTool({ name: 'get-env', arguments: {} });
    assert.notEqual(first.isError, true);
    const again = await client.callTool({ name: 'get-env', arguments: {} });
    const another = await other.callTool({ name: 'get-env', arguments: {} });
    assert.notEqual(again._meta.cache_status, 'hit');
    assert.notEqual(another._meta.cache_status, 'hit');
  });

  it('turned on for a source, a write invalidates its cached reads: the new record is seen, the deleted one gone', async () => {
    fixture.reset();
    const first = await client.callTool({ name: 'c_listItems', arguments: {} });
    assert.equal(first._meta.cache_status, 'miss');
    const second = await client.callTool({ name: 'c_listItems', arguments: {} });
    assert.equal(second._meta.cache_status, 'hit');
    // Per caller: another client's session does not get the first one's entry.
    assert.equal((await other.callTool({ name: 'c_listItems', arguments: {} }))._meta.cache_status, 'miss');

    await client.callTool({ name: 'c_createItem', arguments: { name: 'Kite', price: 3 } });
    const after = await client.callTool({ name: 'c_listItems', arguments: {} });
    assert.equal(after._meta.cache_status, 'miss');
    assert.deepEqual(names(after), ['Doll', 'Gadget', 'Kite', 'Widget']);

    const item = await client.callTool({ name: 'c_getItem', arguments: { itemId: '1' } });
    assert.equal(item.structuredContent.name, 'Widget');
    assert.equal((await client.callTool({ name: 'c_getItem', arguments: { itemId: '1' } }))._meta.cache_status, 'hit');
    const deleted = await client.callTool({ name: 'c_deleteItem', arguments: { itemId: '1' } });
    assert.notEqual(deleted.isError, true, JSON.stringify(deleted));
    const gone = await client.callTool({ name: 'c_getItem', arguments: { itemId: '1' } });
    assert.equal(gone.isError, true, JSON.stringify(gone));
    assert.match(gone.content[0].text, /NOT_FOUND/);
  });
});

describe('invalidation across two replicas through Redis', { skip: !REDIS && 'redis-server is not installed' }, () => {
  const TOKEN = 'freshness-token';
  const auth = { Authorization: `Bearer ${TOKEN}` };
  let dir;
  let redis;
  let fixture;
  let a;
  let b;
  let clientA;
  let clientB;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-fresh-'));
    const redisPort = await freePort();
    redis = await startRedis(redisPort, dir);
    fixture = await startInventoryFixture({ apiKey: 'k', token: 't' });
    const options = {
      packs: 'conformance',
      env: { ...CREDENTIALS, TP_TOKENS: TOKEN },
      config: [
        'store:',
        `  url: redis://127.0.0.1:${redisPort}`,
        'http:',
        '  bearer_tokens_env: TP_TOKENS',
        'openapi:',
        ...openapi('inventory', fixture.url, 'inv_'),
        'sources:',
        '  inventory: {cache: {mode: read_only}}',
        '',
      ].join('\n'),
    };
    a = await startHttpServer(options);
    b = await startHttpServer(options);
    clientA = await connect(a, auth);
    clientB = await connect(b, auth);
  });
  after(async () => {
    await clientA?.close();
    await clientB?.close();
    await a?.stop();
    await b?.stop();
    await fixture?.close();
    await stopRedis(redis);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("a write through replica A invalidates what replica B cached", async () => {
    const first = await clientB.callTool({ name: 'inv_listItems', arguments: {} });
    assert.equal(first._meta.cache_status, 'miss');
    // The same caller (token) on the other replica: a hit from Redis.
    assert.equal((await clientA.callTool({ name: 'inv_listItems', arguments: {} }))._meta.cache_status, 'hit');

    await clientA.callTool({ name: 'inv_createItem', arguments: { name: 'Kite', price: 3 } });
    const after = await clientB.callTool({ name: 'inv_listItems', arguments: {} });
    assert.equal(after._meta.cache_status, 'miss');
    assert.deepEqual(names(after), ['Doll', 'Gadget', 'Kite', 'Widget']);
  });
});
