// What a new user meets in the first minutes, with the clients people use (issue 29):
//   - over stdio, a host lists the tools right after initialize (Claude Desktop, Cursor) and
//     ignores list_changed until restart: the first tools/list must already hold the tools of
//     the sources that load in the background (a REST catalog, an OpenAPI document read from
//     a URL, a gateway upstream), however long they take up to server.wait_for_sources_ms;
//     one still loading then is logged and on /health, never a silent empty list;
//   - a client that declares the tasks extension (Inspector 2.x does) gets a quick call of a
//     task-supporting tool answered in its request, not a CreateTaskResult it must poll;
//   - /health shows one component per source with one state (a catalog or an upstream and
//     the circuit breaker of the service behind it are one thing to an operator).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { TOOLPORT_BIN, startHttpServer, post, initializeSession, runToolport, waitFor, LATEST } from './lib/harness.mjs';
import { NODE, EVERYTHING, yamlString } from './lib/gateway_setup.mjs';
import { startCatalogFixture } from '../fixtures/agentpmt/server.mjs';
import { startInventoryFixture } from '../fixtures/openapi/server.mjs';
import { startTangoFixture } from '../fixtures/tango/server.mjs';
import { startFaultyHttp } from '../fixtures/upstream/faulty_server.mjs';

// An HTTP server in front of `target` that answers every request `delayMs` late (a web API
// on a slow network); with `hang`, it never answers at all.
async function slowProxy(target, { delayMs = 0, hang = false } = {}) {
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    if (hang) return;
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => setTimeout(async () => {
      try {
        const answer = await fetch(target + req.url, {
          method: req.method,
          headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k))),
          body: ['GET', 'HEAD'].includes(req.method) ? undefined : Buffer.concat(chunks),
        });
        const body = Buffer.from(await answer.arrayBuffer());
        res.writeHead(answer.status, { 'Content-Type': answer.headers.get('content-type') ?? 'application/json' });
        res.end(body);
      } catch (e) {
        res.writeHead(502).end(String(e));
      }
    }, delayMs));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(resolve);
    }),
  };
}

describe('first contact: the first tools/list over stdio holds every source', () => {
  let catalog, inventory, slowCatalog, slowInventory, hanging, dir;

  before(async () => {
    catalog = await startCatalogFixture({ tools: 12 });
    inventory = await startInventoryFixture({ apiKey: 'k', token: 't' });
    slowCatalog = await slowProxy(catalog.url, { delayMs: 700 });
    slowInventory = await slowProxy(inventory.url, { delayMs: 700 });
    hanging = await slowProxy(catalog.url, { hang: true });
    dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-first-'));
  });
  after(async () => {
    await Promise.all([slowCatalog?.close(), slowInventory?.close(), hanging?.close()]);
    await catalog?.close();
    await inventory?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const env = () => ({
    ...process.env,
    AGENT_PAYMENT_API_KEY: catalog.apiKey,
    AGENT_PAYMENT_BUDGET_KEY: catalog.budgetKey,
    INVENTORY_API_KEY: 'k',
  });

  function writeConfig(name, text) {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    return file;
  }

  const everySource = () => writeConfig('every.yaml', `
packs: []
rest:
  shop:
    preset: agentpmt
    base_url: ${slowCatalog.url}
openapi:
  inventory:
    document: ${slowInventory.url}/openapi.yaml
    tool_prefix: inv_
upstreams:
  everything:
    command: ${yamlString(NODE)}
    args: [${yamlString(EVERYTHING)}, stdio]
`);

  it('the SDK 1.x client over stdio, listing right after initialize as hosts do, sees the catalog, the document and the upstream', async () => {
    const client = new Client({ name: 'host', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: TOOLPORT_BIN, args: ['serve', '--stdio', '--config', everySource()], env: env(), stderr: 'pipe',
    });
    await client.connect(transport);
    try {
      const started = Date.now();
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      assert.ok(names.includes('word-count'), `the REST catalog's tools on the first list: ${names.join(', ')}`);
      assert.ok(names.some((n) => n.startsWith('inv_')), `the OpenAPI document's tools on the first list: ${names.join(', ')}`);
      assert.ok(names.some((n) => /echo/.test(n)), `the upstream's tools on the first list: ${names.join(', ')}`);
      assert.ok(Date.now() - started < 5000, 'answered once the sources were in, not at the end of the wait');
    } finally {
      await client.close();
    }
  });

  it('`toolport list --stdio` shows every tool of a slow catalog', async () => {
    const config = writeConfig('shop.yaml', `packs: []\nrest:\n  shop:\n    preset: agentpmt\n    base_url: ${slowCatalog.url}\n`);
    const run = await runToolport(['list', '--stdio', `${TOOLPORT_BIN} serve --stdio --config ${config}`], { env: env() });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /word-count/);
  });

  it('a source still loading when the wait runs out is logged and on /health, and the others serve', async () => {
    const config = writeConfig('hanging.yaml', `
server:
  wait_for_sources_ms: 400
packs: [conformance]
rest:
  stuck:
    preset: agentpmt
    base_url: ${hanging.url}
`);
    const server = await startHttpServer({ config: null, extraArgs: ['--config', config], env: env() });
    try {
      const { sessionId: session } = await initializeSession(server);
      const started = Date.now();
      const listed = await post(server, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, { sessionId: session, protocolVersion: LATEST });
      const tools = listed.messages[0].result.tools;
      assert.ok(tools.length > 0, 'the sources that are in serve');
      assert.ok(Date.now() - started >= 300, 'the list waited for the catalog first');
      await waitFor('the log line naming the late source', async () => /source\(s\) stuck still loading after 400 ms/.test(server.logs()));
      const health = await (await fetch(`${server.base}/health`)).json();
      assert.match(health.services.stuck, /loading|unreachable|fetching/, JSON.stringify(health));
    } finally {
      await server.stop();
    }
  });
});

describe('first contact: tasks are not forced on a client that merely supports them', () => {
  let tango, server;
  before(async () => {
    tango = await startTangoFixture({ apiKeys: ['fixture-key'] });
    server = await startHttpServer({
      packs: 'tango',
      config: `packs:\n  tango:\n    base_url: ${tango.url}\n`,
      env: { TANGO_API_KEY: 'fixture-key' },
    });
  });
  after(async () => {
    await server?.stop();
    await tango?.close();
  });

  it('a quick call of an "optional" task tool is answered in its request, with its structured content', async () => {
    const init = await post(server, {
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: {
        protocolVersion: LATEST,
        capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} }, elicitation: {} },
        clientInfo: { name: 'inspector-like', version: '2.12.0' },
      },
    });
    const sessionId = init.headers.get('mcp-session-id');
    await post(server, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId, protocolVersion: LATEST });
    const listed = await post(server, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, { sessionId, protocolVersion: LATEST });
    const summary = listed.messages[0].result.tools.find((t) => t.name === 'get_tango_spending_summary');
    assert.ok(summary?.execution?.taskSupport, 'the tool supports tasks');
    const called = await post(server, {
      jsonrpc: '2.0', id: 3, method: 'tools/call',
      params: { name: 'get_tango_spending_summary', arguments: { fiscal_year: 2024, group_by: 'agency' } },
    }, { sessionId, protocolVersion: LATEST });
    const result = called.messages[0].result;
    assert.ok(result, called.text);
    assert.notEqual(result.resultType, 'task', `a CreateTaskResult for a quick call: ${called.text}`);
    assert.equal(result.taskId, undefined);
    assert.ok(Array.isArray(result.content), called.text);
    assert.ok(result.structuredContent, `declares an outputSchema, so it carries structured content: ${called.text}`);
  });
});

describe('first contact: one /health component per source, with one state', () => {
  it('a REST catalog whose service circuit opened shows open-circuit under its own name, and nothing beside it', async () => {
    const catalog = await startCatalogFixture({ tools: 12 });
    const server = await startHttpServer({
      packs: 'conformance',
      config: `rest:\n  shop:\n    preset: agentpmt\n    base_url: ${catalog.url}\nservices:\n  shop:\n    breaker: {failure_threshold: 1, cooldown_s: 60}\n`,
      env: { AGENT_PAYMENT_API_KEY: catalog.apiKey, AGENT_PAYMENT_BUDGET_KEY: catalog.budgetKey },
    });
    try {
      await waitFor('the catalog', async () => (await (await fetch(`${server.base}/health`)).json()).services.shop === 'available');
      const { sessionId } = await initializeSession(server);
      // The fixture's product that always answers HTTP 500.
      const listed = await post(server, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, { sessionId, protocolVersion: LATEST });
      const failing = listed.messages[0].result.tools.find((t) => /broken/i.test(t.name));
      assert.ok(failing, 'the fixture has a failing product');
      await post(server, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: failing.name, arguments: {} } }, { sessionId, protocolVersion: LATEST });
      const health = await waitFor('the breaker to open', async () => {
        const report = await (await fetch(`${server.base}/health`)).json();
        return report.services.shop === 'open-circuit' ? report : null;
      });
      assert.deepEqual(Object.keys(health.services).filter((k) => k.includes('shop')), ['shop'], JSON.stringify(health));
    } finally {
      await server.stop();
      await catalog.close();
    }
  });

  it('an HTTP upstream that died shows open-circuit under its own name, not connected beside a service entry', async () => {
    const upstream = await startFaultyHttp(['--name', 'remote']);
    const server = await startHttpServer({
      packs: '',
      config: `upstreams:\n  remote:\n    url: ${upstream.url}\nservices:\n  remote: {breaker: {failure_threshold: 2, cooldown_s: 60}}\n`,
    });
    try {
      await waitFor('the upstream', async () => /^connected/.test((await (await fetch(`${server.base}/health`)).json()).services.remote));
      const { sessionId } = await initializeSession(server);
      const listed = await post(server, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, { sessionId, protocolVersion: LATEST });
      const echo = listed.messages[0].result.tools.find((t) => /echo/.test(t.name));
      assert.ok(echo, 'the upstream lists an echo tool');
      await upstream.stop();
      for (let id = 3; id < 6; id++) {
        await post(server, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: echo.name, arguments: { text: 'x' } } }, { sessionId, protocolVersion: LATEST });
      }
      const health = await waitFor('the breaker to open', async () => {
        const report = await (await fetch(`${server.base}/health`)).json();
        return report.services.remote === 'open-circuit' ? report : null;
      });
      assert.deepEqual(Object.keys(health.services).filter((k) => k.includes('remote')), ['remote'], JSON.stringify(health));
    } finally {
      await server.stop();
      await upstream.stop().catch(() => {});
    }
  });
});
