// The call pipeline through the real binary: the official TypeScript SDK client calls the
// `testing` pack's misbehaving tools (enabled by TOOLPORT_TEST_PACK=1) on a server whose
// YAML config sets per-tool policies; plus the W3C traceparent header scoping a budget, and
// `toolport config check` on good and bad files.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpServer, assertAlive, post, initializeSession, TOOLPORT_BIN, LATEST } from './lib/harness.mjs';

const CONFIG = `
tools:
  test_sleep:
    timeout_ms: 300
  test_counter:
    service: metered
    cache:
      ttl_s: 60
  test_fail:
    service: flaky
services:
  metered:
    breaker:
      failure_threshold: 3
  flaky:
    breaker:
      failure_threshold: 2
      cooldown_s: 60
pipeline:
  budget:
    max_downstream_calls_per_request: 24
    default_downstream_per_call: 12
`;

describe('call pipeline (TypeScript SDK client, real binary)', () => {
  let server;
  let client;

  before(async () => {
    server = await startHttpServer({ config: CONFIG, env: { TOOLPORT_TEST_PACK: '1' }, packs: 'conformance,testing' });
    client = new Client({ name: 'pipeline-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  });

  after(async () => {
    await client?.close();
    await server?.stop();
  });

  it('refuses invalid arguments with a structured INVALID_ARGUMENT before the tool runs', async () => {
    const r = await client.callTool({ name: 'test_validate', arguments: { limit: 'ten' } });
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.error_code, 'INVALID_ARGUMENT');
    assert.equal(r.structuredContent.parameter, 'limit');
    assert.equal(r.structuredContent.provided, 'ten');
    assert.match(r.structuredContent.expected_format, /integer/);
    assert.equal(r.structuredContent.example, 10);
    assert.match(r.content[0].text, /INVALID_ARGUMENT/);
    const missing = await client.callTool({ name: 'test_validate', arguments: {} });
    assert.equal(missing.structuredContent.error_code, 'MISSING_PARAMETER');
  });

  it('cancels a call at its deadline and answers TIMEOUT', async () => {
    const started = Date.now();
    const r = await client.callTool({ name: 'test_sleep', arguments: { ms: 60000 } });
    assert.ok(Date.now() - started < 5000, 'answered at the deadline, not after the sleep');
    assert.equal(r.structuredContent.error_code, 'TIMEOUT');
    assert.equal(r.structuredContent.transient, true);
    assertAlive(server);
  });

  it('turns a 5 MiB result into MCP_RESPONSE_TOO_LARGE', async () => {
    const r = await client.callTool({ name: 'test_large', arguments: {} });
    assert.equal(r.structuredContent.error_code, 'MCP_RESPONSE_TOO_LARGE');
    assert.match(r.structuredContent.error, /524\d{4} bytes exceeds the limit of 1048576 bytes/);
  });

  it('serves the second identical read-only call from the cache, with _meta saying so', async () => {
    const first = await client.callTool({ name: 'test_counter', arguments: { key: 'it', downstream_calls: 1 } });
    assert.equal(first._meta.cache_status, 'miss');
    assert.equal(first._meta.downstream_api_calls, 1);
    const second = await client.callTool({ name: 'test_counter', arguments: { downstream_calls: 1, key: 'it' } });
    assert.equal(second._meta.cache_status, 'hit');
    assert.equal(second._meta.downstream_api_calls, 0);
    assert.deepEqual(second.structuredContent, first.structuredContent);
    for (const k of ['response_size_bytes', 'duration_ms', 'tokens_estimate']) assert.equal(typeof second._meta[k], 'number', k);
  });

  it('a plain handler exception is an INTERNAL_ERROR result, and the server keeps serving', async () => {
    const r = await client.callTool({ name: 'test_fail', arguments: { crash: true } });
    assert.equal(r.isError, true);
    assert.equal(r.structuredContent.error_code, 'INTERNAL_ERROR');
    const ok = await client.callTool({ name: 'test_simple_text', arguments: {} });
    assert.equal(ok.isError, undefined);
  });

  it('opens the circuit of a failing service: fast SERVER_UNHEALTHY, and /health says open-circuit', async () => {
    const before = await (await fetch(`${server.base}/health`)).json();
    assert.equal(before.services.flaky, 'reachable', 'configured services are listed from the start');
    let r;
    for (let i = 0; i < 5; i++) {
      r = await client.callTool({ name: 'test_fail', arguments: { code: 'UPSTREAM_ERROR' } });
      if (r.structuredContent.error_code === 'SERVER_UNHEALTHY') break;
    }
    assert.equal(r.structuredContent.error_code, 'SERVER_UNHEALTHY');
    assert.ok(r.structuredContent.retry_after_ms > 0 && r.structuredContent.retry_after_ms <= 60000);
    const res = await fetch(`${server.base}/health`);
    assert.equal(res.status, 200, 'degraded is still 200');
    const report = await res.json();
    assert.equal(report.status, 'degraded');
    assert.equal(report.services.flaky, 'open-circuit');
    assert.equal(report.services.metered, 'reachable');
    assert.match(server.logs(), /"event":"mcp_server_unhealthy"/);
  });

  it('scopes the downstream budget to the traceparent header', async () => {
    const { sessionId } = await initializeSession(server);
    const call = async (id, traceparent, key) => {
      const res = await post(
        server,
        { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'test_counter', arguments: { key } } },
        { sessionId, protocolVersion: LATEST, headers: traceparent ? { traceparent } : {} },
      );
      assert.equal(res.status, 200, res.text);
      return res.messages.find((m) => m.id === id).result;
    };
    const a = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const b = '00-5bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    // 24 calls a request, 12 reserved per call without _meta: two calls fit, the third does not.
    assert.equal((await call(2, a, 'b1')).isError, undefined);
    assert.equal((await call(3, a, 'b2')).isError, undefined);
    const refused = await call(4, a, 'b3');
    assert.equal(refused.structuredContent.error_code, 'MCP_BUDGET_EXCEEDED');
    assert.equal(refused.structuredContent.recoverable, true);
    assert.equal((await call(5, b, 'b4')).isError, undefined, 'another user request has its own budget');
  });
});

describe('toolport config check', () => {
  let dir;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-config-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const check = (name, text) => {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    return { file, ...spawnSync(TOOLPORT_BIN, ['config', 'check', file], { encoding: 'utf8' }) };
  };

  it('accepts a complete file and summarizes it', () => {
    const r = check('good.yaml', `${CONFIG}\nstore: memory\npacks: [conformance]\n`);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /OK/);
    assert.match(r.stdout, /budget: 24 calls\/request/);
  });

  const bad = [
    ['an unknown key', 'tools:\n  t:\n    timout_ms: 5\n', /bad\.yaml:3: tools\.t\.timout_ms: unknown key/],
    ['a wrong type', 'pipeline:\n  timeout_ms: soon\n', /:2: pipeline\.timeout_ms: must be an integer/],
    ['an unknown stage', 'pipeline:\n  disable: [cache, teleport]\n', /:2: pipeline\.disable: unknown stage "teleport"/],
    ['a bad store URL', 'store: mongodb://x\n', /:1: store: must be "memory" or a redis/],
    ['a YAML syntax error', 'tools: [\n', /YAML syntax error/],
    ['an unset environment variable', 'store: ${TOOLPORT_NOT_SET_ANYWHERE}\n', /TOOLPORT_NOT_SET_ANYWHERE is not set/],
  ];
  for (const [what, text, expected] of bad) {
    it(`rejects ${what} naming the file, line and key`, () => {
      const r = check('bad.yaml', text);
      assert.equal(r.status, 2, r.stdout + r.stderr);
      assert.match(r.stderr, expected);
      assert.doesNotMatch(r.stderr, /terminate called|Aborted/);
    });
  }
});
