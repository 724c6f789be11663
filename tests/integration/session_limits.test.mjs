// Session lifetime limits: idle sessions expire, and the session cap is enforced with 503.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHttpServer, assertAlive, assertRpcError, post, initializeSession, sleep, LATEST } from './lib/harness.mjs';

const ping = (id) => ({ jsonrpc: '2.0', id, method: 'ping' });

describe('idle sessions expire', () => {
  let server;
  before(async () => {
    server = await startHttpServer({ config: 'http:\n  session_idle_timeout_s: 1\n' });
  });
  after(async () => {
    await server?.stop();
  });

  it('a session used within the timeout lives; an idle one is gone (404)', async () => {
    const { sessionId: busy } = await initializeSession(server);
    const { sessionId: idle } = await initializeSession(server);
    for (let i = 0; i < 6; i++) {
      await sleep(300);
      const res = await post(server, ping(10 + i), { sessionId: busy, protocolVersion: LATEST });
      assert.equal(res.status, 200, res.text);
    }
    const res = await post(server, ping(99), { sessionId: idle, protocolVersion: LATEST });
    assert.equal(res.status, 404, res.text);
    assertRpcError(res, -32600);
    assertAlive(server);
  });
});

describe('session cap', () => {
  let server;
  before(async () => {
    server = await startHttpServer({ config: 'http:\n  max_sessions: 2\n' });
  });
  after(async () => {
    await server?.stop();
  });

  it('the session over the cap gets 503 and existing sessions keep working', async () => {
    const { sessionId: a } = await initializeSession(server);
    await initializeSession(server);
    const third = await post(server, {
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: LATEST, capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    assert.equal(third.status, 503, third.text);
    assertRpcError(third, -32600);
    assert.match(JSON.parse(third.text).error.message, /2 sessions/);
    const res = await post(server, ping(5), { sessionId: a, protocolVersion: LATEST });
    assert.equal(res.status, 200, res.text);
  });
});
