// Issue 29, defects 1 and 2, as a user meets them with the SDK 1.x client (which checks
// every structuredContent, an error's too, against the tool's outputSchema):
//  - an argument name the tool does not define is refused with INVALID_ARGUMENT naming it,
//    the accepted names and the closest one: always for the packs Toolport owns (tango
//    against its fixture, context on examples/), by the schema for OpenAPI operations and
//    upstream tools (additionalProperties: false), and for REST catalogs and upstreams
//    configured with `strict_arguments: true`;
//  - an upstream's error result whose structuredContent breaks its outputSchema reaches
//    the client as its error text, not as the SDK's -32602.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpServer, waitFor } from './lib/harness.mjs';
import { NODE, yamlString } from './lib/gateway_setup.mjs';
import { SCHEMA_UPSTREAM } from './lib/schema_upstream.mjs';
import { startTangoFixture } from '../fixtures/tango/server.mjs';
import { startCatalogFixture } from '../fixtures/agentpmt/server.mjs';
import { startInventoryFixture } from '../fixtures/openapi/server.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');

async function connect(server) {
  const client = new Client({ name: 'toolport-it-arguments', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  return client;
}

const text = (result) => (result.content ?? []).map((c) => c.text ?? '').join('\n');

// The refusal every source gives: an error result (that the SDK accepted), whose text has
// the code, the unknown name, the closest accepted name and the accepted names.
// The context pack words unknown names as every source does (INVALID_ARGUMENT).
function assertRefused(result, { unknown, closest, accepted, code = /INVALID_ARGUMENT/ }) {
  let t = text(result);
  try {
    const { error } = JSON.parse(t);  // an envelope's JSON text (the context pack)
    if (error) t = `${error.code}: ${error.message}\nSuggestion: ${error.suggestion}`;
  } catch {
    /* prose */
  }
  assert.equal(result.isError, true, t);
  assert.match(t, code, t);
  assert.ok(t.includes(`"${unknown}"`), `names ${unknown}: ${t}`);
  if (closest) assert.ok(t.includes(`Did you mean "${closest}"`) || t.includes(`"${closest}" for "${unknown}"`), `suggests ${closest}: ${t}`);
  assert.match(t, /Unknown arguments? /, t);
  for (const name of accepted) assert.ok(t.includes(name), `lists ${name}: ${t}`);
  assert.match(t, /[Ss]uggestion/, t);
}

describe('unknown argument names: the packs Toolport owns refuse them', () => {
  let fixture;
  let world;
  let server;
  let client;

  before(async () => {
    fixture = await startTangoFixture({ apiKeys: ['fixture-key'] });
    world = mkdtempSync(path.join(os.tmpdir(), 'toolport-args-'));
    cpSync(path.join(ROOT, 'examples'), world, { recursive: true });
    server = await startHttpServer({
      packs: 'tango,context',
      env: { TANGO_API_KEY: 'fixture-key' },
      config: [
        'packs:',
        '  tango:',
        `    base_url: ${fixture.url}`,
        '  context:',
        `    patterns_root: ${world}/patterns`,
        `    projects_root: ${world}/projects`,
        `    index_file: ${world}/cache/index.sqlite`,
        '',
      ].join('\n'),
    });
    client = await connect(server);
  });
  after(async () => {
    await client?.close();
    await server?.stop();
    await fixture?.close();
    if (world) rmSync(world, { recursive: true, force: true });
  });

  it('tango: search_tango_contracts with invented names asks no question of Tango and says what was meant', async () => {
    fixture.reset();
    const result = await client.callTool({
      name: 'search_tango_contracts',
      arguments: { keyword: 'cloud', agency: 'GSA', start_date: '2025-01-01' },
    });
    assertRefused(result, { unknown: 'start_date', closest: 'award_date_start', accepted: ['query', 'awarding_agency', 'award_date_end'] });
    const t = text(result);
    assert.ok(t.includes('"query" for "keyword"'), t);
    assert.ok(t.includes('"awarding_agency" or "funding_agency" for "agency"'), t);
    assert.equal(fixture.stats().requests.length, 0, 'no request reached Tango');

    // The names it defines still work.
    const ok = await client.callTool({ name: 'search_tango_contracts', arguments: { query: 'cloud', award_date_start: '2024-01-01' } });
    assert.notEqual(ok.isError, true, text(ok));
  });

  it('context: searchPatterns {query} is refused, suggesting keyword, instead of returning the whole library', async () => {
    const result = await client.callTool({ name: 'searchPatterns', arguments: { query: 'retry' } });
    assertRefused(result, { unknown: 'query', closest: 'keyword', accepted: ['keyword', 'category', 'includeExecutable', 'limit'], code: /^INVALID_ARGUMENT:/ });
    const ok = await client.callTool({ name: 'searchPatterns', arguments: { keyword: 'retry' } });
    assert.notEqual(ok.isError, true, text(ok));
  });
});

describe('by the schema: OpenAPI operations and upstream tools, and the upstream error results', () => {
  let inventory;
  let server;
  let client;

  before(async () => {
    inventory = await startInventoryFixture({ apiKey: 'k', token: 't' });
    server = await startHttpServer({
      packs: 'conformance',
      env: { INVENTORY_API_KEY: 'k', INVENTORY_BEARER: 't' },
      config: [
        'openapi:',
        '  inventory:',
        `    document: ${path.join(ROOT, 'tests/fixtures/openapi/inventory.yaml')}`,
        `    base_url: ${inventory.url}/v1`,
        '    tool_prefix: inv_',
        'gateway:',
        '  prefix_mode: always',
        'upstreams:',
        '  open:',
        `    command: ${yamlString(NODE)}`,
        `    args: [${yamlString(SCHEMA_UPSTREAM)}]`,
        '',
      ].join('\n'),
    });
    client = await connect(server);
    await waitFor('the upstream', async () => (await client.listTools()).tools.some((t) => t.name === 'open_lookup'));
  });
  after(async () => {
    await client?.close();
    await server?.stop();
    await inventory?.close();
  });

  it('an OpenAPI operation (additionalProperties: false) refuses item_id, suggesting itemId', async () => {
    inventory.reset();
    const result = await client.callTool({ name: 'inv_getItem', arguments: { item_id: '1' } });
    assertRefused(result, { unknown: 'item_id', closest: 'itemId', accepted: ['itemId'] });
    assert.equal(inventory.stats().count, 0);
    // The API's own error (404) reaches the SDK client as an error result too.
    const missing = await client.callTool({ name: 'inv_getItem', arguments: { itemId: '999' } });
    assert.equal(missing.isError, true);
    assert.match(text(missing), /NOT_FOUND|404/);
  });

  it("an upstream tool follows its schema: additionalProperties: false refuses, an open schema passes the name on", async () => {
    const refused = await client.callTool({ name: 'open_lookup', arguments: { record_id: '1' } });
    assertRefused(refused, { unknown: 'record_id', closest: 'id', accepted: ['id'] });
    const passed = await client.callTool({ name: 'open_echo_args', arguments: { txt: 'x' } });
    assert.notEqual(passed.isError, true, text(passed));
    assert.deepEqual(JSON.parse(text(passed)), { txt: 'x' });
  });

  it("an upstream error whose structuredContent breaks the outputSchema reaches the SDK client as its text", async () => {
    const result = await client.callTool({ name: 'open_lookup', arguments: { id: 'missing' } });
    assert.equal(result.isError, true);
    assert.equal(result.structuredContent, undefined);
    assert.match(text(result), /NOT_FOUND: no record "missing"\. Suggestion: look up an id that exists/);
    const found = await client.callTool({ name: 'open_lookup', arguments: { id: '7' } });
    assert.deepEqual(found.structuredContent, { record: { id: '7' } });
    assert.match(server.logs(), /open_lookup.*error result's structuredContent does not match the tool's outputSchema/);
  });
});

describe('strict_arguments: true on a REST catalog and on an upstream', () => {
  let catalog;
  let server;
  let client;

  before(async () => {
    catalog = await startCatalogFixture({ tools: 20 });
    server = await startHttpServer({
      packs: 'conformance',
      extraArgs: ['--rest', 'agentpmt'],
      env: { AGENT_PAYMENT_API_URL: catalog.url, AGENT_PAYMENT_API_KEY: catalog.apiKey, AGENT_PAYMENT_BUDGET_KEY: catalog.budgetKey },
      config: [
        'rest:',
        '  agentpmt:',
        '    preset: agentpmt',
        '    strict_arguments: true',
        'gateway:',
        '  prefix_mode: always',
        'upstreams:',
        '  strict:',
        `    command: ${yamlString(NODE)}`,
        `    args: [${yamlString(SCHEMA_UPSTREAM)}]`,
        '    strict_arguments: true',
        '',
      ].join('\n'),
    });
    client = await connect(server);
    await waitFor('the catalog and the upstream', async () => {
      const names = (await client.listTools()).tools.map((t) => t.name);
      return names.includes('echo-parameters') && names.includes('strict_echo_args');
    });
  });
  after(async () => {
    await client?.close();
    await server?.stop();
    await catalog?.close();
  });

  it('a REST catalog refuses a name its schema leaves open, before any purchase', async () => {
    catalog.reset();
    const result = await client.callTool({ name: 'echo-parameters', arguments: { msg: 'hi' } });
    assertRefused(result, { unknown: 'msg', closest: 'message', accepted: ['message'] });
    assert.equal(catalog.stats().requests.filter((r) => r.path === '/products/purchase').length, 0);
    const ok = await client.callTool({ name: 'echo-parameters', arguments: { message: 'hi' } });
    assert.notEqual(ok.isError, true, text(ok));
  });

  it('an upstream refuses a name even where its schema allows it', async () => {
    const refused = await client.callTool({ name: 'strict_echo_args', arguments: { txt: 'x' } });
    assertRefused(refused, { unknown: 'txt', closest: 'text', accepted: ['text'] });
    const ok = await client.callTool({ name: 'strict_echo_args', arguments: { text: 'x' } });
    assert.deepEqual(JSON.parse(text(ok)), { text: 'x' });
  });
});
