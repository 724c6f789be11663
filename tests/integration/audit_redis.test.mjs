// The audit log's Redis stream: two replicas on one redis-server each add their records to
// the one capped stream, and `toolport audit` reads (and follows) every replica's there.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  TOOLPORT_BIN,
  REDIS,
  freePort,
  startRedis,
  stopRedis,
  serverForTest,
  runToolport,
  track,
  waitFor,
} from './lib/harness.mjs';

const config = (redisPort, file) => `
store:
  url: redis://127.0.0.1:${redisPort}
audit:
  enabled: true
  path: ${file}
  flush_interval_ms: 100
  stream: it:audit
  stream_max_len: 1000
`;

describe('audit records of two replicas in one Redis stream', { skip: !REDIS && 'redis-server is not installed' }, () => {
  it('each replica adds its records; toolport audit reads and follows them from the stream', async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-audit-redis-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const redisPort = await freePort();
    const redis = await startRedis(redisPort, dir);
    t.after(() => stopRedis(redis));
    const a = await serverForTest(t, { config: config(redisPort, path.join(dir, 'a.jsonl')) });
    const b = await serverForTest(t, { config: config(redisPort, path.join(dir, 'b.jsonl')) });
    const call = async (server, name) => {
      const client = new Client({ name: 'audit-redis', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      const result = await client.callTool({ name: 'greet', arguments: { name } });
      await client.close();
      return result;
    };
    await call(a, 'from-a');
    await call(b, 'from-b');
    await waitFor('both records in the stream', () => {
      const r = spawnSync('redis-cli', ['-p', String(redisPort), 'XLEN', 'it:audit'], { encoding: 'utf8' });
      return Number(r.stdout.trim()) >= 2;
    });

    const cli = path.join(dir, 'cli.yaml');
    writeFileSync(cli, config(redisPort, path.join(dir, 'cli.jsonl')));
    const read = await runToolport(['audit', '--config', cli, '--tool', 'greet', '--json']);
    assert.equal(read.status, 0, read.stderr);
    const records = read.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(records.length, 2);
    assert.equal(new Set(records.map((r) => r.replica)).size, 2, 'one record from each replica');
    for (const r of records) assert.match(r.replica, /:\d+$/);
    // The file of one replica has its own record only.
    const fileOnly = await runToolport(['audit', '--config', cli, '--file', path.join(dir, 'a.jsonl'), '--json']);
    assert.equal(fileOnly.stdout.trim().split('\n').length, 1);

    // --follow on the stream.
    const follower = track(spawn(TOOLPORT_BIN, ['audit', '--config', cli, '--follow', '--json', '--limit', '0']));
    let out = '';
    follower.stdout.on('data', (d) => (out += d));
    t.after(() => follower.kill('SIGKILL'));
    await waitFor('the existing records', () => out.trim().split('\n').length >= 2);
    await call(b, 'followed');
    await waitFor('the followed record', () => out.includes('"replica"') && out.trim().split('\n').length >= 3, 10000);
    assert.equal(JSON.parse(out.trim().split('\n')[2]).target, 'greet');
  });

  it('Redis unreachable: the records still go to the file, the failures are counted', async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-audit-redis-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const deadPort = await freePort();
    const file = path.join(dir, 'audit.jsonl');
    const server = await serverForTest(t, { config: config(deadPort, file) });
    const client = new Client({ name: 'audit-redis-down', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    const result = await client.callTool({ name: 'greet', arguments: { name: 'x' } });
    assert.ok(!result.isError);
    await client.close();
    await waitFor('the failure counted', async () => {
      const metrics = await (await fetch(`${server.base}/metrics`)).text();
      return /^toolport_audit_redis_errors_total 1$/m.test(metrics) && /^toolport_audit_records_total 1$/m.test(metrics);
    });
    const read = await runToolport(['audit', '--file', file, '--json']);
    assert.equal(read.stdout.trim().split('\n').length, 1);
  });
});
