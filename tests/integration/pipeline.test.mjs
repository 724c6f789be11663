// The call pipeline through the real binary: the official TypeScript SDK client calls the
// `testing` pack's misbehaving tools (enabled by TOOLPORT_TEST_PACK=1) on a server whose
// YAML config sets per-tool policies; plus the W3C traceparent header scoping a budget, and
// `toolport config check` on good and bad files.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpServer, assertAlive, post, initializeSession, sleep, TOOLPORT_BIN, LATEST } from './lib/harness.mjs';

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

describe('deadlines and cancelled calls', () => {
  let server;

  before(async () => {
    server = await startHttpServer({
      packs: 'testing',
      env: { TOOLPORT_TEST_PACK: '1' },
      config: `
pipeline:
  timeout_ms: 700
tools:
  test_sleep: {timeout_ms: 60000}
gateway: {prefix_mode: always}
upstreams:
  up:
    command: ${JSON.stringify(TOOLPORT_BIN)}
    args: [serve, --stdio, --packs, testing]
    env: {TOOLPORT_TEST_PACK: "1"}
`,
    });
  });
  after(async () => {
    await server?.stop();
  });

  // A stateless call sleeping for 30 s.
  function sleepCall() {
    return JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'test_sleep',
        arguments: { ms: 30000 },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'pipeline-test', version: '1.0.0' },
        },
      },
    });
  }
  const sleepHeaders = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': '2026-07-28',
    'Mcp-Method': 'tools/call',
    'Mcp-Name': 'test_sleep',
  };

  // The call, whose client closes the connection after `ms`.
  async function callAbortedAfter(ms) {
    const abort = new AbortController();
    const call = fetch(`${server.base}/mcp`, { method: 'POST', headers: sleepHeaders, body: sleepCall(), signal: abort.signal })
      .then((res) => res.text())
      .catch(() => 'aborted');
    await sleep(ms);
    abort.abort();
    assert.equal(await call, 'aborted');
  }

  async function cancelledCalls() {
    const metrics = await (await fetch(`${server.base}/metrics`)).text();
    const m = /^toolport_tool_calls_total\{code="CANCELLED",tool="test_sleep"\} (\d+)$/m.exec(metrics);
    assert.doesNotMatch(metrics, /toolport_tool_errors_total\{code="CANCELLED"/);
    return m ? Number(m[1]) : 0;
  }

  async function waitForCancelledCalls(count) {
    const deadline = Date.now() + 5000;
    while ((await cancelledCalls()) < count && Date.now() < deadline) await sleep(100);
    assert.equal(await cancelledCalls(), count);
  }

  it('counts a stateless call its client cancelled (by closing the stream) as CANCELLED in /metrics', async () => {
    const before = await cancelledCalls();
    await callAbortedAfter(500);
    await waitForCancelledCalls(before + 1);
    assertAlive(server);
  });

  // The connection starts watching for its client to leave only once the answer is slow to
  // come (http_server.cpp, LateWatches): a client gone before then is noticed too.
  it('cancels a stateless call whose client left before the connection began to watch for that', async () => {
    const before = await cancelledCalls();
    // The request and the end of the connection in one go: the server reads the request,
    // then (once the call has waited a moment) the end.
    const body = sleepCall();
    const head = Object.entries({ ...sleepHeaders, Host: `127.0.0.1:${server.port}`, 'Content-Length': Buffer.byteLength(body) })
      .map(([name, value]) => `${name}: ${value}`)
      .join('\r\n');
    const sock = net.connect(server.port, '127.0.0.1');
    await new Promise((resolve, reject) => {
      sock.on('connect', () => sock.end(`POST /mcp HTTP/1.1\r\n${head}\r\n\r\n${body}`, resolve));
      sock.on('error', reject);
    });
    sock.resume();
    try {
      await waitForCancelledCalls(before + 1);
    } finally {
      sock.destroy();
    }
    assertAlive(server);
  });

  it('ends a gateway call at pipeline.timeout_ms (700 ms), not at the upstream\'s longer timeout_ms (60 s)', async () => {
    const client = new Client({ name: 'pipeline-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    try {
      const deadline = Date.now() + 15000;
      while (!(await client.listTools()).tools.some((t) => t.name === 'up_test_sleep')) {
        assert.ok(Date.now() < deadline, 'the upstream\'s tools never came');
        await sleep(100);
      }
      const r = await client.callTool({ name: 'up_test_sleep', arguments: { ms: 20000 } });
      assert.equal(r.structuredContent?.error_code, 'TIMEOUT', JSON.stringify(r));
      assert.match(r.structuredContent.error, /within 700 ms/);
    } finally {
      await client.close();
    }
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
