// Fault 5: slowloris. 200 connections each trickle a request header one byte every 500 ms.
// With http.keep_alive_timeout_s: 3 the server closes every one of them once the timeout
// passes (a trickle must not keep resetting it), and meanwhile ordinary clients are served
// with normal latency.
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
  toolCall,
  connect,
  watchSocket,
  sleep,
} from './lib.mjs';

const SLOW_CLIENTS = 200;
const TIMEOUT_S = 3;

describe('slowloris', () => {
  it(`${SLOW_CLIENTS} connections trickling their headers are closed after keep_alive_timeout_s; others are served meanwhile`, async (t) => {
    const server = await startServer(t, { config: `http:\n  keep_alive_timeout_s: ${TIMEOUT_S}\n` });
    const base = await takeBaseline(server);
    const head =
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\nX-Padding: ${'x'.repeat(200)}\r\n\r\n`;

    const socks = await Promise.all(Array.from({ length: SLOW_CLIENTS }, () => connect(server)));
    const openedAt = performance.now();
    const watches = socks.map(watchSocket);
    let sent = 0;
    const trickle = setInterval(() => {
      for (let i = 0; i < socks.length; i++) {
        if (watches[i].closedAt === null && !socks[i].destroyed) socks[i].write(head[sent % head.length]);
      }
      sent++;
    }, 500);
    t.after(() => {
      clearInterval(trickle);
      for (const s of socks) s.destroy();
    });

    // Ordinary clients while the trickle goes on (before the timeout closes it).
    const latencies = [];
    while (performance.now() - openedAt < (TIMEOUT_S - 0.5) * 1000) {
      const t0 = performance.now();
      const session = await initSession(server, '2025-11-25', { timeoutMs: 5000 * server.slow });
      const res = await send(server, { headers: mcpHeaders(session), body: toolCall(2, 'test_simple_text'), timeoutMs: 5000 * server.slow });
      assertAnswered(res, 'an ordinary call during the slowloris');
      assert.equal(res.status, 200, res.text.slice(0, 200));
      assertAnswered(await endSession(server, session), 'DELETE during the slowloris');
      latencies.push(performance.now() - t0);
      await sleep(100);
    }
    const worst = Math.max(...latencies);
    t.diagnostic(`${latencies.length} ordinary sessions served meanwhile, the slowest in ${Math.round(worst)} ms`);
    assert.ok(latencies.length >= 3, `only ${latencies.length} ordinary sessions served in ${TIMEOUT_S - 0.5} s`);
    assert.ok(worst < 1000 * server.slow, `an ordinary session (4 requests) took ${Math.round(worst)} ms during the slowloris`);
    t.diagnostic(`${watches.filter((w) => w.closedAt === null).length} trickling connections still open after ${TIMEOUT_S - 0.5} s`);

    // Every trickling connection is closed by the server once the timeout has passed.
    const deadline = openedAt + TIMEOUT_S * 1000 + 3000 * server.slow;
    while (performance.now() < deadline && watches.some((w) => w.closedAt === null)) await sleep(100);
    clearInterval(trickle);
    const open = watches.filter((w) => w.closedAt === null).length;
    assert.equal(open, 0, `${open} of ${SLOW_CLIENTS} trickling connections still open ${Math.round(performance.now() - openedAt)} ms after they started`);
    const closedAfter = watches.map((w) => w.closedAt - openedAt);
    t.diagnostic(`trickling connections closed by the server after ${Math.round(Math.min(...closedAfter))}-${Math.round(Math.max(...closedAfter))} ms`);
    // The server may say 408 before closing; anything else it says is an HTTP answer.
    for (const w of watches) if (w.data) assert.match(w.data, /^HTTP\/1\.[01] \d{3} /, `unexpected bytes: ${w.data.slice(0, 100)}`);
    for (const s of socks) s.destroy();

    await assertRecovered(server, base, 'slowloris');
  });
});
