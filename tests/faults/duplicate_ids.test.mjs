// Fault 3: request ids reused while the first request with that id is still running. The
// duplicate is refused at once (JSON-RPC -32600 with that id) and the first still gets its
// real result; in a 2025-03-26 batch nothing is lost: one result and one error for the id.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  startServer,
  takeBaseline,
  assertRecovered,
  assertAnswered,
  initSession,
  open,
  send,
  mcpHeaders,
  rpc,
  toolCall,
  sleep,
} from './lib.mjs';

describe('duplicate request ids', () => {
  for (const version of ['2025-06-18', '2025-11-25']) {
    it(`${version}: a second POST reusing an in-flight id is refused at once; the first gets its result`, async (t) => {
      const server = await startServer(t);
      const base = await takeBaseline(server);
      const session = await initSession(server, version);
      const first = open(server, {
        headers: mcpHeaders(session),
        body: toolCall(7, 'test_sleep', { ms: 1500 }),
        timeoutMs: 5000 * server.slow,
      });
      await sleep(300 * server.slow);
      const dup = await send(server, { headers: mcpHeaders(session), body: toolCall(7, 'test_simple_text'), timeoutMs: 5000 * server.slow });
      assertAnswered(dup, 'the duplicate');
      assert.ok(dup.ms < 1000 * server.slow, `the duplicate was answered after ${Math.round(dup.ms)} ms, not at once`);
      assert.equal(first.status, null, 'the first call is still running when the duplicate is refused');
      const refusal = dup.messages.filter((m) => m.id === 7);
      assert.equal(refusal.length, 1, `one reply for the duplicate: ${dup.text.slice(0, 300)}`);
      assert.equal(refusal[0].error?.code, -32600, `the duplicate gets -32600: ${dup.text.slice(0, 300)}`);

      const res = await first.done;
      assertAnswered(res, 'the first call');
      assert.equal(res.status, 200, res.text.slice(0, 300));
      const mine = res.messages.filter((m) => m.id === 7);
      assert.equal(mine.length, 1, `the first call gets exactly its own reply: ${res.text.slice(0, 300)}`);
      assert.equal(mine[0].result?.content?.[0]?.text, 'slept 1500 ms', `the first call's real result: ${res.text.slice(0, 300)}`);

      await assertRecovered(server, base, `duplicate ids (${version})`);
    });
  }

  it('2025-03-26 batch with two requests sharing an id: one result and one error for it, nothing lost', async (t) => {
    const server = await startServer(t);
    const base = await takeBaseline(server);
    const session = await initSession(server, '2025-03-26');
    const batch = [toolCall('dup', 'test_sleep', { ms: 500 }), toolCall('dup', 'test_simple_text'), rpc(3, 'ping')];
    const res = await send(server, { headers: mcpHeaders(session), body: batch, timeoutMs: 8000 * server.slow });
    assertAnswered(res, 'the batch');
    assert.equal(res.status, 200, res.text.slice(0, 300));
    const replies = res.messages.filter((m) => !('method' in m));
    const dups = replies.filter((m) => m.id === 'dup');
    assert.equal(dups.length, 2, `two replies for id "dup": ${res.text.slice(0, 500)}`);
    const result = dups.find((m) => m.result);
    const error = dups.find((m) => m.error);
    assert.equal(result?.result?.content?.[0]?.text, 'slept 500 ms', `the running call's result: ${res.text.slice(0, 500)}`);
    assert.equal(error?.error?.code, -32600, `the duplicate's error: ${res.text.slice(0, 500)}`);
    assert.deepEqual(
      replies.filter((m) => m.id === 3),
      [{ jsonrpc: '2.0', id: 3, result: {} }],
      'the other request of the batch is answered too',
    );
    assert.equal(replies.length, 3, `exactly three replies: ${res.text.slice(0, 500)}`);

    // Two quick requests sharing an id (neither in flight when the other arrives): still
    // one reply each, at least one of them a result.
    const quick = await send(server, { headers: mcpHeaders(session), body: [rpc(5, 'ping'), rpc(5, 'ping')], timeoutMs: 5000 * server.slow });
    assertAnswered(quick, 'the batch of two pings');
    const fives = quick.messages.filter((m) => m.id === 5 && !('method' in m));
    assert.equal(fives.length, 2, `two replies for id 5: ${quick.text}`);
    assert.ok(fives.some((m) => m.result), `at least one ping answered: ${quick.text}`);

    await assertRecovered(server, base, 'duplicate ids in a batch');
  });
});
