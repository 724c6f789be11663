// Fault 6: descriptor exhaustion. The server runs under `prlimit --nofile=N:N` (soft = hard,
// so it cannot raise its limit) and clients open more connections than it has descriptors.
// While exhausted it must not spin on accept() (CPU well below one core) nor flood its log;
// once the clients leave it serves again.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import {
  startServer,
  takeBaseline,
  assertRecovered,
  assertServing,
  initSession,
  notify,
  open,
  mcpHeaders,
  toolCall,
  connect,
  cpuShare,
  fdCount,
  sleep,
} from './lib.mjs';

const HAVE_PRLIMIT = spawnSync('prlimit', ['--version']).status === 0;
// Under a sanitizer build, UBSan's vptr check cannot work without a free descriptor (see
// ubsan_fd_exhaustion.supp); it is switched off for these servers only.
const SUPPRESSIONS = fileURLToPath(new URL('./ubsan_fd_exhaustion.supp', import.meta.url));
const UBSAN_OPTIONS = [process.env.UBSAN_OPTIONS, `suppressions=${SUPPRESSIONS}`].filter(Boolean).join(':');
const limited = (n) => ({ wrapper: ['prlimit', `--nofile=${n}:${n}`, '--'], env: { UBSAN_OPTIONS } });

// Connections the server may or may not get to accept: connect() completes from the listen
// backlog either way.
async function idleSockets(server, n) {
  const socks = [];
  for (let i = 0; i < n; i++) {
    const s = await connect(server);
    s.on('error', () => {});
    socks.push(s);
  }
  return socks;
}

// The limit the server runs under, from /proc/PID/limits: [soft, hard].
function nofile(server) {
  const m = /^Max open files\s+(\d+)\s+(\d+)/m.exec(readFileSync(`/proc/${server.pid}/limits`, 'utf8'));
  return m ? [Number(m[1]), Number(m[2])] : null;
}

describe('descriptor exhaustion', { skip: HAVE_PRLIMIT ? false : 'prlimit not installed' }, () => {
  it('--nofile=64:64, 80 idle sockets and cancelled calls: no spinning, no log flood, serving again afterwards', async (t) => {
    const server = await startServer(t, limited(64));
    assert.deepEqual(nofile(server), [64, 64], 'the server runs with 64 descriptors');
    const base = await takeBaseline(server);
    const mark = server.log.mark();
    const session = await initSession(server, '2025-11-25');
    const ids = Array.from({ length: 20 }, (_, i) => 100 + i);
    const calls = ids.map((id) =>
      open(server, { headers: mcpHeaders(session), body: toolCall(id, 'test_sleep', { ms: 60000 }), timeoutMs: 30000 * server.slow }),
    );
    await sleep(500 * server.slow);
    const socks = await idleSockets(server, 80);
    t.after(() => socks.forEach((s) => s.destroy()));
    // Cancels need connections of their own: with every descriptor taken they may wait in the
    // listen backlog; they are bounded and may go unanswered.
    const cancels = ids.map((id) =>
      open(server, {
        headers: mcpHeaders(session),
        body: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } },
        timeoutMs: 2000 * server.slow,
      }),
    );
    await sleep(500);
    t.diagnostic(`server descriptors during the episode: ${fdCount(server)} (limit 64, baseline ${base.fds})`);
    const cpu = await cpuShare(server, 3000);
    t.diagnostic(`CPU while exhausted: ${(cpu.share * 100).toFixed(1)} % of one core`);
    assert.ok(cpu.share < 0.3, `the server spins while out of descriptors: ${(cpu.share * 100).toFixed(0)} % of one core over 3 s`);
    await Promise.all(cancels.map((c) => c.done));

    // The clients leave.
    socks.forEach((s) => s.destroy());
    calls.forEach((c) => c.abort());
    const logged = server.log.since(mark);
    t.diagnostic(`log lines during the episode: ${logged.lines} (${logged.acceptLines} about accept)`);
    assert.ok(logged.acceptLines < 200, `${logged.acceptLines} log lines about accept during the episode:\n${server.log.tail(5)}`);
    assert.ok(logged.lines < 1000, `${logged.lines} log lines during the episode`);
    await assertRecovered(server, base, 'descriptor exhaustion (64)', { settleMs: 8000 * server.slow });
  });

  it('--nofile=40:40 and 40 calls abandoned after 1 s, then cancelled: reachable again once the clients leave', async (t) => {
    const server = await startServer(t, limited(40));
    assert.deepEqual(nofile(server), [40, 40], 'the server runs with 40 descriptors');
    const base = await takeBaseline(server);
    const mark = server.log.mark();
    const session = await initSession(server, '2025-11-25');
    const ids = Array.from({ length: 40 }, (_, i) => 200 + i);
    const calls = ids.map((id) =>
      open(server, { headers: mcpHeaders(session), body: toolCall(id, 'test_sleep', { ms: 60000 }), abortAfterMs: 1000 }),
    );
    await Promise.all(calls.map((c) => c.done));
    const cancels = await Promise.all(
      ids.map((id) => notify(server, session, 'notifications/cancelled', { requestId: id }, { timeoutMs: 2000 * server.slow })),
    );
    const answered = cancels.filter((r) => r.status === 202).length;
    t.diagnostic(`${answered} of 40 cancels answered while the descriptors were short`);
    const cpu = await cpuShare(server, 1000);
    const logged = server.log.since(mark);
    t.diagnostic(`CPU after the clients left: ${(cpu.share * 100).toFixed(1)} % of one core; ${logged.acceptLines} log lines about accept`);
    // First what the issue reported (unreachable for good), then the rest.
    await assertServing(server, 'reachable once the clients left');
    await assertRecovered(server, base, 'descriptor exhaustion (40)', { settleMs: 8000 * server.slow });
    assert.ok(cpu.share < 0.3, `the server spun after the clients left: ${(cpu.share * 100).toFixed(0)} % of one core`);
    assert.ok(logged.acceptLines < 200, `${logged.acceptLines} log lines about accept:\n${server.log.tail(5)}`);
  });
});
