// Scale-out: two toolport replicas sharing one real redis-server (loopback, a free port).
// A result cached through replica A is a hit on replica B; a service rate limit, a client
// quota and a budget are shared by both. When Redis goes away the replicas keep serving
// (cache from local memory, /health degraded, rate limits fail open as configured); when
// Redis returns on the same port they use it again.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startHttpServer, assertAlive, post, initializeSession, freePort, sleep, LATEST, REDIS, startRedis, stopRedis } from './lib/harness.mjs';

const TOKEN = 'scaleout-token';
const config = (redisPort) => `
store:
  url: redis://127.0.0.1:${redisPort}
  reconnect_interval_ms: 100
  redis_timeout_ms: 200
http:
  bearer_tokens_env: TP_TOKENS
tools:
  test_counter:
    cache: {ttl_s: 60}
  test_sleep:
    service: limited
    cache: {enabled: false}
  test_validate:
    service: metered
services:
  limited:
    rate_per_s: 0.01
    burst: 2
    max_wait_ms: 0
pipeline:
  budget: {max_downstream_calls_per_request: 24, default_downstream_per_call: 12}
  client_quota: {per_minute: 1000}
`;

describe('scale-out through Redis (two replicas)', { skip: !REDIS && 'redis-server is not installed' }, () => {
  let dir;
  let redisPort;
  let redis;
  let a;
  let b;
  const auth = { Authorization: `Bearer ${TOKEN}` };
  const sessions = new Map();
  let nextId = 10;

  async function callTool(server, name, args, headers = {}) {
    if (!sessions.has(server)) sessions.set(server, (await initializeSession(server, LATEST, auth)).sessionId);
    const id = nextId++;
    const res = await post(
      server,
      { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } },
      { sessionId: sessions.get(server), protocolVersion: LATEST, headers: { ...auth, ...headers } },
    );
    assert.equal(res.status, 200, res.text);
    const reply = res.messages.find((m) => m.id === id);
    assert.ok(reply?.result, res.text);
    return reply.result;
  }
  const code = (r) => r.structuredContent?.error_code ?? 'OK';

  async function health(server) {
    const res = await fetch(`${server.base}/health`, { headers: auth });
    return { status: res.status, body: await res.json() };
  }

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-redis-'));
    redisPort = await freePort();
    redis = await startRedis(redisPort, dir);
    const options = { config: config(redisPort), env: { TOOLPORT_TEST_PACK: '1', TP_TOKENS: TOKEN }, packs: 'testing' };
    a = await startHttpServer(options);
    b = await startHttpServer(options);
  });

  after(async () => {
    await a?.stop();
    await b?.stop();
    await stopRedis(redis);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a result cached through replica A is a hit on replica B', async () => {
    const first = await callTool(a, 'test_counter', { key: 'shared' });
    assert.equal(first._meta.cache_status, 'miss');
    const second = await callTool(b, 'test_counter', { key: 'shared' });
    assert.equal(second._meta.cache_status, 'hit');
    assert.deepEqual(second.structuredContent, first.structuredContent);
  });

  it('a service rate limit is shared by both replicas', async () => {
    assert.equal(code(await callTool(a, 'test_sleep', { ms: 0 })), 'OK');
    assert.equal(code(await callTool(b, 'test_sleep', { ms: 0 })), 'OK');
    const refused = await callTool(a, 'test_sleep', { ms: 0 });
    assert.equal(code(refused), 'RATE_LIMITED');
    assert.ok(refused.structuredContent.retry_after_ms > 0);
    assert.equal(code(await callTool(b, 'test_sleep', { ms: 0 })), 'RATE_LIMITED');
  });

  it('a budget is shared by both replicas (same traceparent)', async () => {
    const traceparent = '00-6bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    // 24 downstream calls a request, 12 reserved for each call of a tool that reports none:
    // one call on each replica uses it up, whichever replica gets the third.
    assert.equal(code(await callTool(a, 'test_validate', { limit: 1 }, { traceparent })), 'OK');
    assert.equal(code(await callTool(b, 'test_validate', { limit: 2 }, { traceparent })), 'OK');
    assert.equal(code(await callTool(a, 'test_validate', { limit: 3 }, { traceparent })), 'MCP_BUDGET_EXCEEDED');
    assert.equal(code(await callTool(b, 'test_validate', { limit: 4 }, { traceparent })), 'MCP_BUDGET_EXCEEDED');
  });

  it('keeps serving without Redis (degraded), then uses Redis again when it returns', async () => {
    assert.equal((await health(a)).body.status, 'healthy');
    await stopRedis(redis);
    // The cache falls back to local memory: calls still work, the replicas no longer share.
    const r = await callTool(a, 'test_counter', { key: 'while-down' });
    assert.equal(code(r), 'OK');
    await sleep(300);
    const h = await health(a);
    assert.equal(h.status, 200);
    assert.equal(h.body.status, 'degraded');
    // Rate limits fail open (the default policy): allowed although the shared bucket is empty.
    assert.equal(code(await callTool(b, 'test_sleep', { ms: 0 })), 'OK');
    assertAlive(a);
    assertAlive(b);

    redis = await startRedis(redisPort, dir);
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline && (await health(a)).body.status !== 'healthy') await sleep(100);
    assert.equal((await health(a)).body.status, 'healthy');
    while (Date.now() < deadline && (await health(b)).body.status !== 'healthy') await sleep(100);
    const first = await callTool(b, 'test_counter', { key: 'after-return' });
    assert.equal(first._meta.cache_status, 'miss');
    assert.equal((await callTool(a, 'test_counter', { key: 'after-return' }))._meta.cache_status, 'hit');
  });
});
