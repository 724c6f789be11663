// New limits: a session that never finishes its handshake expires after
// http.handshake_timeout_s, and http.max_connections refuses the connection over the cap
// with HTTP 503 (JSON-RPC error body, Connection: close) until others close.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  startServer,
  takeBaseline,
  assertRecovered,
  assertAnswered,
  initSession,
  endSession,
  send,
  mcpHeaders,
  rpc,
  toolCall,
  connect,
  fdCount,
  sleep,
  CLIENT_INFO,
} from './lib.mjs';

describe('handshake timeout', () => {
  it('a session with initialize and nothing after it is gone after http.handshake_timeout_s (404); a finished handshake stays', async (t) => {
    const server = await startServer(t, { config: 'http:\n  handshake_timeout_s: 1\n' });
    const base = await takeBaseline(server);
    const half = await send(server, {
      headers: mcpHeaders(null),
      body: rpc(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: CLIENT_INFO }),
    });
    assertAnswered(half, 'initialize');
    assert.equal(half.status, 200, half.text);
    const stale = { sessionId: half.headers['mcp-session-id'], version: '2025-11-25' };
    assert.ok(stale.sessionId);
    const done = await initSession(server, '2025-11-25');

    await sleep(3000);
    const late = await send(server, { headers: mcpHeaders(stale), body: rpc(2, 'ping') });
    assertAnswered(late, 'a request on the half-open session');
    assert.equal(late.status, 404, `the session that never finished its handshake expired: HTTP ${late.status} ${late.text}`);
    assert.equal(late.json?.error?.code, -32600, late.text);
    const alive = await send(server, { headers: mcpHeaders(done), body: toolCall(3, 'test_simple_text') });
    assertAnswered(alive, 'a call on the initialized session');
    assert.equal(alive.status, 200, `a session that finished its handshake is kept: ${alive.status} ${alive.text}`);
    assert.equal((await endSession(server, done)).status, 200);
    await assertRecovered(server, base, 'handshake timeout');
  });
});

describe('connection cap', () => {
  it('with http.max_connections: 20, the 21st connection gets 503 + JSON-RPC error + Connection: close; served again once others close', async (t) => {
    const server = await startServer(t, { config: 'http:\n  max_connections: 20\n' });
    const base = await takeBaseline(server);
    const held = [];
    t.after(() => held.forEach((s) => s.destroy()));
    for (let i = 0; i < 20; i++) {
      const s = await connect(server);
      s.on('error', () => {});
      held.push(s);
    }
    const deadline = performance.now() + 2000 * server.slow;
    while (fdCount(server) < base.fds + 20 && performance.now() < deadline) await sleep(50);
    assert.ok(fdCount(server) >= base.fds + 20, `the server took the 20 connections (${fdCount(server)} fds, baseline ${base.fds})`);

    for (let i = 0; i < 3; i++) {
      const over = await send(server, {
        headers: mcpHeaders(null),
        body: rpc(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: CLIENT_INFO }),
        timeoutMs: 5000 * server.slow,
      });
      assertAnswered(over, `connection over the cap (#${i + 1})`);
      assert.equal(over.status, 503, `connection over the cap: HTTP ${over.status} ${over.text.slice(0, 200)}`);
      assert.equal(over.headers.connection, 'close', 'the refusal closes the connection');
      assert.equal(over.json?.jsonrpc, '2.0', `a JSON-RPC error body: ${over.text.slice(0, 200)}`);
      assert.equal(typeof over.json?.error?.code, 'number', over.text.slice(0, 200));
      assert.equal(typeof over.json?.error?.message, 'string');
    }

    // Five leave: new connections are served again.
    held.splice(0, 5).forEach((s) => s.destroy());
    const t0 = performance.now();
    let session = null;
    while (!session && performance.now() - t0 < 3000 * server.slow) {
      try {
        session = await initSession(server, '2025-11-25', { timeoutMs: 2000 * server.slow });
      } catch {
        await sleep(100);
      }
    }
    assert.ok(session, 'a new connection is served once others have closed');
    const call = await send(server, { headers: mcpHeaders(session), body: toolCall(2, 'test_simple_text') });
    assertAnswered(call, 'a call after others closed');
    assert.equal(call.status, 200, call.text);
    assert.equal((await endSession(server, session)).status, 200);
    held.forEach((s) => s.destroy());
    await assertRecovered(server, base, 'connection cap');
  });
});
