// Fault 4: clients that disconnect in the middle of a call, on every protocol revision. The
// server must close its side of the connection promptly (descriptors back to the baseline,
// nothing in CLOSE-WAIT). Where the revision ties the call to the connection, the call ends
// too: the legacy SSE session ends with its stream, and a 2026-07-28 (stateless) call is
// cancelled when its client leaves.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  startServer,
  takeBaseline,
  assertRecovered,
  assertAnswered,
  initSession,
  openLegacySession,
  open,
  send,
  mcpHeaders,
  rpc,
  toolCall,
  statelessRequest,
  sleep,
  fdCount,
} from './lib.mjs';

// Descriptors back to the baseline within `ms`; returns how long it took, or null.
async function fdsBackWithin(server, base, ms) {
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    if (fdCount(server) <= base.fds) return performance.now() - t0;
    await sleep(50);
  }
  return null;
}

describe('clients that disconnect mid-call', () => {
  it('2024-11-05 (legacy HTTP+SSE): dropping the stream ends the session and frees its socket', async (t) => {
    const server = await startServer(t);
    const base = await takeBaseline(server);
    const legacy = await openLegacySession(server);
    const accepted = await legacy.post(toolCall(2, 'test_sleep', { ms: 60000 }));
    assert.equal(accepted.status, 202, `the call is accepted: ${accepted.status} ${accepted.text}`);
    await sleep(500);
    assert.equal(legacy.stream.messages.filter((m) => m.id === 2).length, 0, 'the call is still running');
    legacy.stream.abort();
    const took = await fdsBackWithin(server, base, 2000 * server.slow);
    assert.notEqual(took, null, `the server kept the dropped stream's socket open (${fdCount(server)} fds, baseline ${base.fds})`);
    const after = await legacy.post(rpc(3, 'ping'));
    assertAnswered(after, 'POST to the dropped session');
    assert.equal(after.status, 404, `the legacy session ended with its stream: ${after.status} ${after.text}`);
    await assertRecovered(server, base, 'legacy SSE client gone mid-call');
  });

  for (const version of ['2025-03-26', '2025-06-18', '2025-11-25']) {
    it(`${version} (Streamable HTTP): a POST abandoned mid-call leaves no socket behind; the session lives on`, async (t) => {
      const server = await startServer(t);
      const base = await takeBaseline(server);
      const session = await initSession(server, version);
      const calls = Array.from({ length: 5 }, (_, i) =>
        open(server, { headers: mcpHeaders(session), body: toolCall(10 + i, 'test_sleep', { ms: 60000 }), abortAfterMs: 500 }),
      );
      const results = await Promise.all(calls.map((c) => c.done));
      results.forEach((r, i) => assert.ok(r.aborted && r.status === null, `call ${10 + i} was running when the client left: ${r.status} ${r.text}`));
      const took = await fdsBackWithin(server, base, 2000 * server.slow);
      assert.notEqual(
        took,
        null,
        `the server kept the abandoned POSTs' sockets open (${fdCount(server)} fds, baseline ${base.fds})`,
      );
      // Losing a connection is not cancelling the session.
      const ping = await send(server, { headers: mcpHeaders(session), body: rpc(20, 'ping') });
      assertAnswered(ping, 'ping on the session');
      assert.equal(ping.status, 200, `the session still serves: ${ping.status} ${ping.text}`);
      await assertRecovered(server, base, `${version} client gone mid-call`);
    });
  }

  it('2026-07-28 (stateless): the client leaving at 0.5 s cancels a 6 s call and frees its socket', async (t) => {
    const server = await startServer(t, { logLevel: 'debug' });
    const base = await takeBaseline(server);
    const okCalls = async () => {
      const res = await send(server, { method: 'GET', path: '/metrics' });
      const m = /^toolport_tool_calls_total\{code="OK",tool="test_sleep"\} (\d+)/m.exec(res.text);
      return m ? Number(m[1]) : 0;
    };
    const finished = (id) =>
      server.log.recent().filter((l) => l.includes('"event":"tool_call"') && l.includes(`"request_id":"${id}"`));

    // Control: the observables see a stateless call that runs to its end.
    const before = await okCalls();
    const control = statelessRequest('control', 'tools/call', { name: 'test_sleep', arguments: { ms: 300 } });
    const ok = await send(server, { headers: control.headers, body: control.body, timeoutMs: 5000 * server.slow });
    assertAnswered(ok, 'the control call');
    assert.equal(ok.status, 200, ok.text.slice(0, 300));
    assert.equal(ok.messages.find((m) => m.id === 'control')?.result?.content?.[0]?.text, 'slept 300 ms', ok.text.slice(0, 300));
    assert.equal(await okCalls(), before + 1, 'a finished call is counted in toolport_tool_calls_total{code="OK"}');
    assert.equal(finished('control').length, 1, 'a finished call is logged (tool_call at debug)');

    const leaving = statelessRequest('leaving', 'tools/call', { name: 'test_sleep', arguments: { ms: 6000 } });
    const call = open(server, { headers: leaving.headers, body: leaving.body, abortAfterMs: 500 });
    const res = await call.done;
    assert.ok(res.aborted && res.status === null, `the call was running when the client left: ${res.status} ${res.text}`);
    // Both checks are made before either is asserted, so that a failure names every problem.
    const problems = [];
    const took = await fdsBackWithin(server, base, 2000 * server.slow);
    if (took === null) problems.push(`the server kept the socket of the departed client (${fdCount(server)} fds, baseline ${base.fds})`);

    // Past the moment the call would have ended had it not been cancelled.
    await sleep(Math.max(0, call.startedAt + 6000 + 1000 * server.slow - performance.now()));
    const counted = (await okCalls()) - before - 1;
    if (counted !== 0) problems.push(`the abandoned call ran to its end (counted in toolport_tool_calls_total{code="OK"})`);
    if (finished('leaving').some((l) => l.includes('"code":"OK"'))) problems.push('the abandoned call ran to its end (logged tool_call code OK)');
    assert.deepEqual(problems, []);
    await assertRecovered(server, base, '2026-07-28 client gone mid-call');
  });
});
