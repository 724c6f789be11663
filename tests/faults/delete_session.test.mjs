// Fault 2: the client ends its session (DELETE) while calls are running on it and a GET
// stream is open. Every POST must end promptly (a JSON-RPC error "Session ended..." for its
// id, or the end of its event stream) and so must the GET stream; nothing stays open.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  startServer,
  takeBaseline,
  assertRecovered,
  assertAnswered,
  initSession,
  endSession,
  open,
  mcpHeaders,
  toolCall,
  sleep,
  withTimeout,
} from './lib.mjs';

const CALLS = 20;

describe('DELETE during calls', () => {
  for (const version of ['2025-06-18', '2025-11-25']) {
    it(`${version}: ${CALLS} running calls and a GET stream end promptly when the session is deleted`, async (t) => {
      const server = await startServer(t);
      const base = await takeBaseline(server);
      const session = await initSession(server, version);
      const get = open(server, {
        method: 'GET',
        headers: { ...mcpHeaders(session), Accept: 'text/event-stream' },
        timeoutMs: 7000 * server.slow,
      });
      assert.ok(await withTimeout(get.response, 5000 * server.slow, 'GET stream headers'), 'GET stream opened');
      assert.equal(get.status, 200, 'GET stream status');
      const ids = Array.from({ length: CALLS }, (_, i) => `call-${i}`);
      const calls = ids.map((id) =>
        open(server, { headers: mcpHeaders(session), body: toolCall(id, 'test_sleep', { ms: 60000 }), timeoutMs: 7000 * server.slow }),
      );
      await sleep(1000 * server.slow);

      const deletedAt = performance.now();
      const del = await endSession(server, session, { timeoutMs: 5000 * server.slow });
      assertAnswered(del, 'DELETE');
      assert.ok(del.status >= 200 && del.status < 300, `DELETE: HTTP ${del.status} ${del.text}`);
      const bound = 2000 * server.slow + 500;

      const [results, stream] = await Promise.all([Promise.all(calls.map((c) => c.done)), get.done]);
      const hanging = results.filter((r) => r.timedOut).length;
      assert.deepEqual(
        [hanging ? `${hanging} of ${CALLS} POSTs still open after the session was deleted` : null,
          stream.timedOut ? `the GET stream still open ${Math.round(stream.endedAt - deletedAt)} ms after DELETE` : null].filter(Boolean),
        [],
      );
      results.forEach((res, i) => {
        const what = `tools/call ${ids[i]}`;
        assertAnswered(res, what);
        const after = res.endedAt - deletedAt;
        assert.ok(after <= bound, `${what}: ended ${Math.round(after)} ms after DELETE (bound ${bound} ms)`);
        const mine = res.messages.filter((m) => m.id === ids[i] && !('method' in m));
        if ((res.headers['content-type'] ?? '').startsWith('application/json')) {
          assert.equal(res.status, 200, `${what}: HTTP ${res.status} ${res.text.slice(0, 200)}`);
          assert.equal(mine.length, 1, `${what}: ${res.text.slice(0, 300)}`);
          assert.ok(mine[0].error, `${what}: expected a JSON-RPC error: ${res.text.slice(0, 300)}`);
          assert.match(mine[0].error.message, /^Session ended/, `${what}: ${res.text.slice(0, 300)}`);
        } else {
          assert.ok(!mine.some((m) => m.result), `${what}: no result after the session ended`);
        }
      });

      const streams = results.filter((r) => (r.headers['content-type'] ?? '').startsWith('text/event-stream')).length;
      const slowest = Math.max(stream.endedAt, ...results.map((r) => r.endedAt)) - deletedAt;
      t.diagnostic(`${CALLS - streams} JSON error replies, ${streams} event streams ended; the last ${Math.round(slowest)} ms after DELETE`);
      // It ends with the stream's last chunk, or at least with the connection.
      assert.ok(stream.ended || stream.error, 'the GET stream ended');
      const after = stream.endedAt - deletedAt;
      assert.ok(after <= bound, `the GET stream ended ${Math.round(after)} ms after DELETE (bound ${bound} ms)`);

      await assertRecovered(server, base, `DELETE during calls (${version})`);
      const again = await endSession(server, session);
      assert.equal(again.status, 404, `the deleted session is gone: ${again.status} ${again.text}`);
    });
  }
});
