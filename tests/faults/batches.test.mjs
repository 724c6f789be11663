// Fault 8: very large JSON-RPC batches (2025-03-26, the one revision that has them). A batch
// up to http.max_batch_size (default 1000) is answered in full, every id present, also two
// at once; a larger batch is refused as a whole (HTTP 400, JSON-RPC -32600 naming the limit)
// instead of being answered in part.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, takeBaseline, assertRecovered, assertAnswered, initSession, send, mcpHeaders, rpc, toolCall } from './lib.mjs';

// Every request of `batch` has exactly one reply, and there is nothing else.
function assertAllAnswered(res, batch, what) {
  assertAnswered(res, what);
  assert.equal(res.status, 200, `${what}: HTTP ${res.status} ${res.text.slice(0, 300)}`);
  const replies = res.messages.filter((m) => !('method' in m));
  const want = new Set(batch.map((m) => JSON.stringify(m.id)));
  const seen = new Map();
  for (const m of replies) seen.set(JSON.stringify(m.id), (seen.get(JSON.stringify(m.id)) ?? 0) + 1);
  const missing = [...want].filter((id) => !seen.has(id));
  const doubled = [...seen].filter(([, n]) => n > 1).map(([id]) => id);
  const foreign = [...seen.keys()].filter((id) => !want.has(id));
  assert.deepEqual(
    { replies: replies.length, missing: missing.length, doubled: doubled.length, foreign: foreign.length },
    { replies: batch.length, missing: 0, doubled: 0, foreign: 0 },
    `${what}: first missing ids ${missing.slice(0, 5).join(', ')}`,
  );
  const errors = replies.filter((m) => m.error);
  assert.equal(errors.length, 0, `${what}: ${errors.length} errors, e.g. ${JSON.stringify(errors[0])}`);
}

// test_counter's count; 2025-03-26 has no structuredContent, the text holds the same JSON.
const invocation = (reply) => JSON.parse(reply?.result?.content?.[0]?.text ?? 'null')?.invocation;

const pings = (n, from = 1) => Array.from({ length: n }, (_, i) => rpc(from + i, 'ping'));

describe('1,000-request batches', () => {
  it('a batch of 1000 pings gets exactly 1000 replies; two batches of 1000 at once too', async (t) => {
    const server = await startServer(t);
    const base = await takeBaseline(server);
    const session = await initSession(server, '2025-03-26');
    const one = pings(1000);
    assertAllAnswered(await send(server, { headers: mcpHeaders(session), body: one, timeoutMs: 10000 * server.slow }), one, 'batch of 1000 pings');

    const a = pings(1000, 5000);
    const b = Array.from({ length: 1000 }, (_, i) => toolCall(`c${i}`, 'test_counter', { key: `batch-${i}` }));
    const [ra, rb] = await Promise.all([
      send(server, { headers: mcpHeaders(session), body: a, timeoutMs: 10000 * server.slow }),
      send(server, { headers: mcpHeaders(session), body: b, timeoutMs: 10000 * server.slow }),
    ]);
    assertAllAnswered(ra, a, 'parallel batch of 1000 pings');
    assertAllAnswered(rb, b, 'parallel batch of 1000 test_counter calls');
    assert.ok(rb.messages.every((m) => invocation(m) === 1), `every counter call ran once: ${rb.text.slice(0, 300)}`);
    await assertRecovered(server, base, 'batches of 1000');
  });

  it('a batch of 3000 is refused whole: HTTP 400, -32600 naming the limit of 1000', async (t) => {
    const server = await startServer(t);
    const base = await takeBaseline(server);
    const session = await initSession(server, '2025-03-26');
    const big = Array.from({ length: 3000 }, (_, i) => toolCall(i + 1, 'test_counter', { key: 'refused' }));
    const res = await send(server, { headers: mcpHeaders(session), body: big, timeoutMs: 10000 * server.slow });
    assertAnswered(res, 'batch of 3000');
    assert.equal(res.status, 400, `HTTP ${res.status}; ${res.messages.length} replies: ${res.text.slice(0, 200)}`);
    assert.ok(res.json && !Array.isArray(res.json), `one JSON-RPC error, not a batch reply: ${res.text.slice(0, 200)}`);
    assert.equal(res.json.error?.code, -32600, res.text.slice(0, 300));
    assert.match(res.json.error.message, /\b1000\b/, `the error names the limit: ${res.json.error.message}`);
    assert.equal(res.json.id, null);
    // Refused whole: none of its calls ran.
    const probe = await send(server, { headers: mcpHeaders(session), body: [toolCall('p', 'test_counter', { key: 'refused' })] });
    assert.equal(invocation(probe.messages[0]), 1, `no call of the refused batch ran: ${probe.text.slice(0, 300)}`);
    await assertRecovered(server, base, 'batch of 3000');
  });

  it('with http.max_batch_size: 2000, a batch of 1500 is answered in full (no reply lost past 1024)', async (t) => {
    const server = await startServer(t, { config: 'http:\n  max_batch_size: 2000\n' });
    const base = await takeBaseline(server);
    const session = await initSession(server, '2025-03-26');
    const batch = pings(1500);
    assertAllAnswered(await send(server, { headers: mcpHeaders(session), body: batch, timeoutMs: 10000 * server.slow }), batch, 'batch of 1500 pings');
    await assertRecovered(server, base, 'batch of 1500');
  });
});
