// Tool pins shared through Redis (issue 34: "two replicas agreeing through Redis"): two
// toolport replicas on one real redis-server (loopback, a free port), each a gateway in front
// of the same upstream (tests/integration/lib/shifting_upstream.mjs, a child of each), each
// with a state directory of its own (so no pins file is shared). Under quarantine:
//   - replica B meets read_file already changed and withholds it, though it never saw the
//     definition A pinned: it knows the pin from Redis;
//   - an approval through B's API (`toolport pins approve --url`) makes A serve it;
//   - a reset through A is seen by B;
//   - a replica restarted on a fresh state directory judges against the pins in Redis;
//   - Redis away: /health says so, listings keep the decisions last read, an approval fails
//     with an error instead of deciding on old pins.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpServer, runToolport, waitFor, freePort, startRedis, stopRedis, REDIS } from './lib/harness.mjs';
import { NODE, yamlString, text, code } from './lib/gateway_setup.mjs';
import { SHIFTING_UPSTREAM } from './lib/shifting_upstream.mjs';

const configFor = (redisPort, start) => `
store:
  url: redis://127.0.0.1:${redisPort}
  reconnect_interval_ms: 100
  redis_timeout_ms: 500
upstreams:
  shifty:
    command: ${yamlString(NODE)}
    args: [${yamlString(SHIFTING_UPSTREAM)}]
    env: {SHIFTING_START: ${yamlString(start)}}
sources:
  shifty: {pinning: quarantine}
pinning:
  poll_ms: 200
`;

async function replica(redisPort, stateDir, { start = '' } = {}) {
  const server = await startHttpServer({
    packs: '',
    config: configFor(redisPort, start),
    env: { XDG_STATE_HOME: stateDir },
  });
  const client = new Client({ name: 'toolport-it-pins-redis', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  return { server, client, stateDir };
}

async function stop(r) {
  await r?.client.close().catch(() => {});
  await r?.server.stop();
}

const names = async (r) => (await r.client.listTools()).tools.map((t) => t.name).sort();
const description = async (r, name) => (await r.client.listTools()).tools.find((t) => t.name === name)?.description;
const pins = (args) => runToolport(['pins', ...args]);
const health = async (r) => (await fetch(`${r.server.base}/health`)).json();
const describePins = async (r) => (await (await fetch(`${r.server.base}/admin/pins`)).json());
const shifty = async (r) => (await describePins(r)).sources.find((s) => s.source === 'shifty');
const redisCli = (port, ...args) => spawnSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' }).stdout.trim();

describe('pins shared through Redis (two replicas)', { skip: !REDIS && 'redis-server is not installed' }, () => {
  let dir;
  let redisPort;
  let redis;
  let a;
  let b;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-pins-redis-'));
    redisPort = await freePort();
    redis = await startRedis(redisPort, dir);
    a = await replica(redisPort, mkdtempSync(path.join(dir, 'a-')));
    await waitFor('A lists the upstream', async () => (await names(a)).includes('read_file'));
  });
  after(async () => {
    await stop(a);
    await stop(b);
    await stopRedis(redis);
    rmSync(dir, { recursive: true, force: true });
  });

  it('pins in Redis, not in a file', async () => {
    const toolPins = () => redisCli(redisPort, 'HKEYS', 'toolport:pins:shifty:pinned').split('\n').filter((k) => k.startsWith('tool:')).sort();
    await waitFor('the pins in Redis', () => toolPins().join() === 'tool:delete_file,tool:read_file,tool:shift');
    const value = redisCli(redisPort, 'HGET', 'toolport:pins:shifty:pinned', 'tool:read_file');
    const [digest, ...json] = value.split(' ');
    assert.match(digest, /^[0-9a-f]{64}$/);
    const record = JSON.parse(json.join(' '));
    assert.equal(record.definition.description, 'Reads a file.');
    assert.equal(record.by, 'first sight');
    assert.ok(!existsSync(path.join(a.stateDir, 'toolport', 'pins.json')), 'no pins file');
    assert.equal((await health(a)).services.pins, 'redis');
    assert.equal((await describePins(a)).store, 'redis');
  });

  it('a replica that never saw the pinned definition withholds the changed one', async () => {
    // B's upstream has read_file changed before B ever lists it.
    b = await replica(redisPort, mkdtempSync(path.join(dir, 'b-')), { start: 'describe' });
    await waitFor('B lists the upstream', async () => (await names(b)).includes('delete_file'));
    await waitFor('B records the change', async () => (await shifty(b))?.pending.some((p) => p.name === 'read_file'));
    assert.deepEqual(await names(b), ['delete_file', 'shift']);
    const refused = await b.client.callTool({ name: 'read_file', arguments: { path: '/etc/hosts' } });
    assert.equal(code(refused), 'MCP_TOOL_QUARANTINED');
    assert.match(refused.structuredContent.error, /read_file of source shifty is quarantined: changed \(description changed\)/);
    // The pin is still A's.
    const pinned = (await shifty(b)).pinned.find((p) => p.name === 'read_file');
    assert.equal(pinned.definition.description, 'Reads a file.');
    assert.equal(text(await a.client.callTool({ name: 'read_file', arguments: { path: 'x' } })), 'read x');

    // The same change at A's upstream: withheld there too.
    await a.client.callTool({ name: 'shift', arguments: { change: 'describe' } });
    await waitFor('A withholds read_file', async () => !(await names(a)).includes('read_file'));
  });

  it('an approval through B is served by A', async () => {
    // A configuration whose pins are in Redis is not served by the pins file.
    const cli = path.join(dir, 'cli.yaml');
    writeFileSync(cli, configFor(redisPort, ''));
    const refused = await pins(['list', '--config', cli]);
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /keeps its pins in the Redis store.*--url/s);

    const approved = await pins(['approve', 'shifty', 'read_file', '--url', b.server.base]);
    assert.equal(approved.status, 0, approved.stderr);
    await waitFor('A serves the approved read_file', async () => (await names(a)).includes('read_file'));
    assert.match(await description(a, 'read_file'), /id_rsa/);
    assert.equal(text(await a.client.callTool({ name: 'read_file', arguments: { path: 'y' } })), 'read y');
    await waitFor('B serves it', async () => (await names(b)).includes('read_file'));
    const pin = (await shifty(a)).pinned.find((p) => p.name === 'read_file');
    assert.equal(pin.by, 'loopback');
    assert.deepEqual((await shifty(a)).pending, []);
  });

  it('a reset through A is seen by B', async () => {
    for (const r of [a, b]) await r.client.callTool({ name: 'shift', arguments: { change: 'add' } });
    await waitFor('both record the new tool', async () =>
      (await shifty(a)).pending.some((p) => p.name === 'exfiltrate') &&
      (await shifty(b)).pending.some((p) => p.name === 'exfiltrate'));
    assert.ok(!(await names(a)).includes('exfiltrate'));
    assert.ok(!(await names(b)).includes('exfiltrate'));
    // (A tool reset alone would be "added" again: its source is pinned. The whole source is
    // pinned afresh.)
    const before = await shifty(a);
    const entries = before.pinned.length + before.pending.length;  // tools, prompts, templates; one pending
    const reset = await pins(['reset', 'shifty', '--url', a.server.base]);
    assert.equal(reset.status, 0, reset.stderr);
    assert.match(reset.stdout, new RegExp(`${entries} entries of source shifty reset`));
    // Forgotten: the next listing pins the source on first sight, on A and on B.
    await waitFor('A serves exfiltrate', async () => (await names(a)).includes('exfiltrate'));
    await waitFor('B serves exfiltrate', async () => (await names(b)).includes('exfiltrate'));
    assert.equal(text(await b.client.callTool({ name: 'exfiltrate', arguments: { path: 'z' } })), 'sent z');
    assert.deepEqual((await shifty(b)).pending, []);
  });

  it('a replica restarted on a fresh state directory judges against the pins in Redis', async () => {
    await stop(a);
    // Its upstream serves read_file as it was first pinned; the pin is the approved change.
    a = await replica(redisPort, mkdtempSync(path.join(dir, 'a2-')));
    await waitFor('A lists the upstream again', async () => (await names(a)).includes('delete_file'));
    await waitFor('A withholds the old read_file', async () =>
      (await shifty(a))?.pending.some((p) => p.name === 'read_file'));
    assert.ok(!(await names(a)).includes('read_file'));
    assert.ok(!existsSync(path.join(a.stateDir, 'toolport', 'pins.json')), 'no pins file');
  });

  it('Redis away: health says so, the last decisions stand, approvals fail', async () => {
    await stopRedis(redis);
    redis = null;  // (stopped: a child killed by a signal keeps exitCode null)
    await waitFor('A reports the pins store unreachable', async () => {
      const report = await health(a);
      return /^redis store unreachable: listings judged against the pins read last$/.test(report.services.pins) &&
        report.status === 'degraded';
    });
    assert.deepEqual(await names(a), ['delete_file', 'shift']);  // read_file still withheld
    assert.equal(text(await a.client.callTool({ name: 'delete_file', arguments: { path: 'q' } })), 'deleted q');
    const refused = await a.client.callTool({ name: 'read_file', arguments: { path: 'q' } });
    assert.equal(code(refused), 'MCP_TOOL_QUARANTINED');
    const approve = await fetch(`${a.server.base}/admin/pins/approve`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ source: 'shifty' }),
    });
    assert.equal(approve.status, 500);
    assert.match((await approve.json()).error, /pins store could not be reached/);
    assert.match(a.server.logs(), /pins: cannot read the redis store: Redis is unreachable/);
  });
});
