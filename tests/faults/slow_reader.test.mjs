// Fault 7: a client that never reads its answer. Its POST produces lots of data (an event
// stream of big results, or one big JSON reply); the client stops reading from its socket.
// With http.write_timeout_s: 2 the server drops it once its writes stall that long, keeps
// its memory bounded meanwhile, and serves everyone else as usual.
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
  fdCount,
  procStatus,
  cpuShare,
  sleep,
} from './lib.mjs';

const MIB = 1024 * 1024;
const REPLAY_BYTES = 4 * MIB;
const CONFIG = `
http:
  write_timeout_s: 2
  max_replay_bytes: ${REPLAY_BYTES}
pipeline:
  max_response_bytes: ${64 * MIB}
`;

// Writes `body` as a POST on a raw socket, then never reads from it again.
async function postAndStopReading(server, session, body) {
  const sock = await connect(server);
  sock.on('error', () => {});
  const payload = JSON.stringify(body);
  const headers = { ...mcpHeaders(session), 'Content-Length': Buffer.byteLength(payload), Host: `127.0.0.1:${server.port}` };
  sock.pause();
  sock.write(`POST /mcp HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n${payload}`);
  return sock;
}

// While the stuck client sits there: ordinary sessions are served, and RSS stays bounded.
// Returns when the server has let go of the stuck socket (descriptors back to the baseline),
// or fails after `ms`.
async function serveOthersUntilDropped(server, base, ms, what) {
  const t0 = performance.now();
  let peakKb = 0;
  let served = 0;
  // First the server makes the answer (100 MiB take it a while, during which others wait
  // on its loop: not this fault's concern); then it can only wait for the client to read.
  while (performance.now() - t0 < ms) {
    peakKb = Math.max(peakKb, procStatus(server).rssKb);
    if ((await cpuShare(server, 100)).share < 0.3) break;
  }
  const madeAfter = performance.now() - t0;
  while (performance.now() - t0 < ms) {
    peakKb = Math.max(peakKb, procStatus(server).rssKb);
    if (fdCount(server) <= base.fds) return { droppedAfter: performance.now() - t0, madeAfter, peakKb, served };
    const s0 = performance.now();
    const session = await initSession(server, '2025-11-25', { timeoutMs: 3000 * server.slow });
    const res = await send(server, { headers: mcpHeaders(session), body: toolCall(2, 'test_simple_text'), timeoutMs: 3000 * server.slow });
    assertAnswered(res, `${what}: an ordinary call meanwhile`);
    assert.equal(res.status, 200);
    await endSession(server, session);
    const took = performance.now() - s0;
    assert.ok(took < 1000 * server.slow, `${what}: an ordinary session took ${Math.round(took)} ms meanwhile`);
    served++;
    await sleep(200);
  }
  assert.fail(`${what}: the server still holds the non-reading client's socket after ${ms} ms (${fdCount(server)} fds, baseline ${base.fds})`);
}

// What reached the client before the server dropped it: read it now, to its end.
function drain(sock, ms) {
  return new Promise((resolve) => {
    let bytes = 0;
    let text = '';
    const done = () => {
      clearTimeout(timer);
      sock.destroy();
      resolve({ bytes, head: text });
    };
    const timer = setTimeout(done, ms);
    sock.on('data', (d) => {
      bytes += d.length;
      if (text.length < 4096) text += d.toString('latin1', 0, Math.min(d.length, 4096));
    });
    sock.on('end', done);
    sock.on('close', done);
    sock.resume();
  });
}

describe('a client that never reads', () => {
  it(`an event stream of 100 MiB (2025-03-26 batch with progress): dropped after write_timeout_s, memory bounded by max_replay_bytes`, async (t) => {
    const server = await startServer(t, { config: CONFIG });
    const base = await takeBaseline(server);
    const session = await initSession(server, '2025-03-26');
    // The progress notification makes the answer an event stream; 100 results of 1 MiB follow
    // on it, 25 times what the stream may keep for replay.
    const CALLS = 100;
    const batch = [toolCall(0, 'test_tool_with_progress', {}, { progressToken: 'slow-reader' })];
    for (let i = 1; i <= CALLS; i++) batch.push(toolCall(i, 'test_large', { bytes: MIB }));
    const sock = await postAndStopReading(server, session, batch);
    const r = await serveOthersUntilDropped(server, base, 2000 + 6000 * server.slow, 'event stream');
    t.diagnostic(`answer made after ${Math.round(r.madeAfter)} ms, dropped after ${Math.round(r.droppedAfter)} ms; ${r.served} ordinary sessions served meanwhile; ` +
      `peak RSS ${Math.round(r.peakKb / 1024)} MiB (baseline ${Math.round(base.rssKb / 1024)} MiB)`);
    // The results are made while the stream stalls (the write timeout may pass before they are
    // all made), so ordinary sessions may find no window here; the JSON case below has one.
    // Had the server kept what the client did not read, it would hold 100 MiB.
    assert.ok(r.peakKb <= base.rssKb + server.rssSlackKb, `RSS peaked at ${Math.round(r.peakKb / 1024)} MiB while the client stalled`);
    const got = await drain(sock, 3000);
    assert.match(got.head, /^HTTP\/1\.1 200 [^\r]*\r\n(?:[^\r]+\r\n)*?Content-Type: text\/event-stream/i, 'the answer was an event stream');
    assert.ok(got.bytes < CALLS * MIB, `the stream was cut (the client got ${got.bytes} bytes)`);
    await assertRecovered(server, base, 'non-reading event-stream client');
  });

  it('one big JSON reply (2025-11-25): dropped after write_timeout_s, memory bounded', async (t) => {
    const server = await startServer(t, { config: CONFIG });
    const base = await takeBaseline(server);
    const session = await initSession(server, '2025-11-25');
    const BYTES = 16 * MIB;
    const sock = await postAndStopReading(server, session, toolCall(2, 'test_large', { bytes: BYTES }));
    const r = await serveOthersUntilDropped(server, base, 2000 + 6000 * server.slow, 'JSON reply');
    t.diagnostic(`answer made after ${Math.round(r.madeAfter)} ms, dropped after ${Math.round(r.droppedAfter)} ms; ${r.served} ordinary sessions served meanwhile; ` +
      `peak RSS ${Math.round(r.peakKb / 1024)} MiB (baseline ${Math.round(base.rssKb / 1024)} MiB)`);
    assert.ok(r.served >= 1, 'ordinary sessions were served while the non-reading client was held');
    // One reply is in memory a few times over while it is made (result, JSON, accounting).
    const bound = base.rssKb + server.rssSlackKb + (4 * BYTES) / 1024;
    assert.ok(r.peakKb <= bound, `RSS peaked at ${Math.round(r.peakKb / 1024)} MiB while the client stalled (bound ${Math.round(bound / 1024)} MiB)`);
    const got = await drain(sock, 3000);
    assert.match(got.head, /^HTTP\/1\.1 200 /, 'the answer had started');
    assert.ok(got.bytes < BYTES, `the reply was cut (the client got ${got.bytes} bytes)`);
    await assertRecovered(server, base, 'non-reading JSON client');
  });
});
