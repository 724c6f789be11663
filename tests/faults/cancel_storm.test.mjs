// Fault 1: a storm of cancellations. Many calls run at once on one session, the client cancels
// each (notifications/cancelled); every POST must then be answered promptly: a JSON-RPC error
// for its id ("Request cancelled...") or, where an event stream had already started, the end
// of that stream. And clients that give up on their POST first (like curl -m) and cancel
// afterwards must leave no socket open on the server.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  startServer,
  takeBaseline,
  assertRecovered,
  assertAnswered,
  initSession,
  endSession,
  notify,
  open,
  mcpHeaders,
  toolCall,
  sleep,
} from './lib.mjs';

const CALLS = 50;

// Checks one cancelled call's POST: answered, and how.
function assertCancelledReply(res, id, sentCancelAt, boundMs) {
  const what = `tools/call id ${id}`;
  assertAnswered(res, what);
  const tookMs = res.endedAt - sentCancelAt;
  assert.ok(tookMs <= boundMs, `${what}: answered ${Math.round(tookMs)} ms after its cancellation (bound ${boundMs} ms)`);
  assert.equal(res.status, 200, `${what}: HTTP ${res.status} ${res.text.slice(0, 200)}`);
  const mine = res.messages.filter((m) => m.id === id && !('method' in m));
  if ((res.headers['content-type'] ?? '').startsWith('application/json')) {
    assert.equal(mine.length, 1, `${what}: expected one reply for the id: ${res.text.slice(0, 300)}`);
    assert.ok(mine[0].error, `${what}: expected a JSON-RPC error, got ${res.text.slice(0, 300)}`);
    assert.equal(typeof mine[0].error.code, 'number');
    assert.match(mine[0].error.message, /^Request cancelled/, `${what}: ${res.text.slice(0, 300)}`);
  } else {
    // An event stream that had started: it ends, without a result.
    assert.match(res.headers['content-type'] ?? '', /^text\/event-stream/, `${what}: content type`);
    assert.ok(!mine.some((m) => m.result), `${what}: a cancelled call must not report a result`);
  }
}

describe('cancel storm', () => {
  for (const version of ['2025-06-18', '2025-11-25']) {
    it(`${version}: ${CALLS} concurrent test_sleep calls, each cancelled: every POST answered within 2 s`, async (t) => {
      const server = await startServer(t);
      const base = await takeBaseline(server);
      const session = await initSession(server, version);
      const ids = Array.from({ length: CALLS }, (_, i) => 1000 + i);
      const calls = ids.map((id) =>
        open(server, {
          headers: mcpHeaders(session),
          body: toolCall(id, 'test_sleep', { ms: 60000 }),
          timeoutMs: 7000 * server.slow,
        }),
      );
      // Give every call time to be read and started.
      await sleep(1000 * server.slow);
      const early = calls.filter((c) => c.status !== null && !(c.headers['content-type'] ?? '').startsWith('text/event-stream'));
      assert.equal(early.length, 0, 'no call answered before being cancelled');

      const cancelAt = performance.now();
      const cancels = await Promise.all(
        ids.map((id) =>
          notify(server, session, 'notifications/cancelled', { requestId: id, reason: 'fault campaign: cancel storm' }, {
            timeoutMs: 5000 * server.slow,
          }),
        ),
      );
      cancels.forEach((res, i) => {
        assertAnswered(res, `notifications/cancelled for ${ids[i]}`);
        assert.equal(res.status, 202, `notifications/cancelled for ${ids[i]}: ${res.status} ${res.text}`);
      });
      const results = await Promise.all(calls.map((c) => c.done));
      const hanging = results.filter((r) => r.timedOut).length;
      assert.equal(hanging, 0, `${hanging} of ${CALLS} cancelled calls were never answered`);
      // Measured from when the first cancel was sent (all went out at once).
      results.forEach((res, i) => assertCancelledReply(res, ids[i], cancelAt, 2000 * server.slow + 500));
      const streams = results.filter((r) => (r.headers['content-type'] ?? '').startsWith('text/event-stream')).length;
      const slowest = Math.max(...results.map((r) => r.endedAt - cancelAt));
      t.diagnostic(`${CALLS - streams} JSON error replies, ${streams} event streams ended; the last ${Math.round(slowest)} ms after the cancels`);

      await assertRecovered(server, base, `cancel storm (${version})`);
      assert.equal((await endSession(server, session)).status, 200);
    });
  }

  it('clients abort their POST after 1 s (like curl -m), then cancel: no socket stays open on the server', async (t) => {
    const server = await startServer(t);
    const base = await takeBaseline(server);
    const session = await initSession(server, '2025-11-25');
    const ids = Array.from({ length: 20 }, (_, i) => 2000 + i);
    const calls = ids.map((id) =>
      open(server, { headers: mcpHeaders(session), body: toolCall(id, 'test_sleep', { ms: 60000 }), abortAfterMs: 1000 }),
    );
    const results = await Promise.all(calls.map((c) => c.done));
    results.forEach((r, i) => assert.ok(r.aborted, `call ${ids[i]} was to be abandoned by the client, got ${JSON.stringify({ status: r.status, error: r.error })}`));
    const cancels = await Promise.all(
      ids.map((id) => notify(server, session, 'notifications/cancelled', { requestId: id, reason: 'client gave up' }, { timeoutMs: 5000 * server.slow })),
    );
    cancels.forEach((res, i) => {
      assertAnswered(res, `notifications/cancelled for ${ids[i]}`);
      assert.equal(res.status, 202);
    });
    await assertRecovered(server, base, 'aborted and cancelled calls');
  });
});
