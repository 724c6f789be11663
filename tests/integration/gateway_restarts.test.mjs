// No leaked processes or descriptors in the gateway: an upstream that exits after every
// connection (tests/fixtures/upstream/one_shot_server.sh, which also leaves a grandchild
// behind) is restarted a thousand times, and a thousand clients connect and leave; then
// the gateway's descriptors, its children, zombies and every process that carries the
// test's marker in its environment are counted.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { startHttpServer, sleep, initializeSession, request, post } from './lib/harness.mjs';

const ONE_SHOT = fileURLToPath(new URL('../fixtures/upstream/one_shot_server.sh', import.meta.url));
const RESTARTS = Number(process.env.GATEWAY_RESTARTS || 1000);

const fdCount = (pid) => readdirSync(`/proc/${pid}/fd`).length;

function processes() {
  const out = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      let environ = '';
      try {
        environ = readFileSync(`/proc/${entry}/environ`, 'latin1');
      } catch {
        // another user's process, or gone
      }
      out.push({ pid: Number(entry), state: fields[0], ppid: Number(fields[1]), environ });
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

const lines = (file) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0);

describe('gateway: restarts and connects leave nothing behind', () => {
  it(`restarts a dying stdio upstream ${RESTARTS} times and serves ${RESTARTS} client connects without leaks`, async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-restarts-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const countFile = path.join(dir, 'starts');
    const marker = `TOOLPORT_RESTART_MARKER=${randomUUID()}`;
    const server = await startHttpServer({
      packs: '',
      config: `
upstreams:
  once:
    command: [/bin/sh, ${JSON.stringify(ONE_SHOT)}]
    env: {ONE_SHOT_COUNT_FILE: ${JSON.stringify(countFile)}, TOOLPORT_RESTART_MARKER: ${JSON.stringify(marker.split('=')[1])}}
    restart_delay_ms: 0
log: {level: error}
`,
    });
    t.after(() => server.stop());
    const pid = server.child.pid;

    // Warm up (the first starts, the first client), then measure the baseline.
    const deadline0 = Date.now() + 20000;
    while (lines(countFile) < 10 && Date.now() < deadline0) await sleep(20);
    assert.ok(lines(countFile) >= 10, 'the upstream is being restarted');
    const first = await initializeSession(server);
    await request(server, 'DELETE', { headers: { 'Mcp-Session-Id': first.sessionId } });
    const fdsBefore = fdCount(pid);

    // A thousand client connects (initialize, a list, DELETE) while the upstream churns.
    for (let i = 0; i < RESTARTS; i++) {
      const { sessionId } = await initializeSession(server);
      const listed = await post(server, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { sessionId, protocolVersion: '2025-11-25' });
      assert.equal(listed.status, 200);
      const gone = await request(server, 'DELETE', { headers: { 'Mcp-Session-Id': sessionId } });
      assert.equal(gone.status, 200);
    }
    const deadline = Date.now() + 180000;
    while (lines(countFile) < RESTARTS + 10 && Date.now() < deadline) await sleep(50);
    const starts = lines(countFile);
    assert.ok(starts >= RESTARTS + 10, `only ${starts} upstream starts`);

    const fdsAfter = fdCount(pid);
    // At most the pipes of the child running right now may differ (stdin, stdout,
    // stderr and its exit watcher).
    assert.ok(fdsAfter <= fdsBefore + 4, `descriptors: ${fdsBefore} before, ${fdsAfter} after ${starts} restarts`);
    const all = processes();
    // The upstream dies again and again: the one that just died may still be a zombie for
    // the moment before the gateway reaps it. A leak is a zombie that stays.
    let zombies = all.filter((p) => p.ppid === pid && p.state === 'Z').map((p) => p.pid);
    for (const until = Date.now() + 3000; zombies.length > 0 && Date.now() < until; ) {
      await sleep(100);
      const now = processes();
      zombies = zombies.filter((z) => now.some((p) => p.pid === z && p.ppid === pid && p.state === 'Z'));
    }
    assert.equal(zombies.length, 0, `zombie children left unreaped for 3 s: ${zombies}`);
    const children = all.filter((p) => p.ppid === pid && p.state !== 'Z');
    assert.ok(children.length <= 1, `children: ${children.length}`);
    const marked = all.filter((p) => p.environ.includes(marker));
    // The current upstream and its sleep at most; none of the thousand earlier groups.
    assert.ok(marked.length <= 2, `${marked.length} processes of the upstream are left`);

    // Stopping the gateway ends the last group too.
    await server.stop();
    await sleep(200);
    const left = processes().filter((p) => p.environ.includes(marker));
    assert.equal(left.length, 0, `${left.length} processes left after the gateway stopped`);
  });
});
