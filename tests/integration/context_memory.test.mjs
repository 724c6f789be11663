// The context pack's session memory in the real binary, with the official SDK client
// (which checks each result's structuredContent against the tool's outputSchema):
//   - a FIFO planted as a project's notes file is a clear FILESYSTEM_ERROR, never a worker
//     blocked for ever: the other context tools keep answering and SIGTERM stops the server;
//   - a worker blocked in the kernel (the notes file locked by another process) does not
//     hold a call past its deadline, does not leave the pack without workers, and does not
//     hold up SIGTERM;
//   - 30,000 notes page through getDecisions (limit, cursor, since/until), newest first,
//     without MCP_RESPONSE_TOO_LARGE.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpServer, sleep, track, waitFor, withTimeout } from './lib/harness.mjs';

// A projects root with one project per name, and the config that serves it.
function world(projects, extraConfig = []) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-memory-'));
  for (const name of projects) mkdirSync(path.join(dir, 'projects', name, '.agent-memory'), { recursive: true });
  mkdirSync(path.join(dir, 'patterns'), { recursive: true });
  const config = [
    'packs:',
    '  context:',
    `    patterns_root: ${dir}/patterns`,
    `    projects_root: ${dir}/projects`,
    `    index_file: ${dir}/cache/index.sqlite`,
    ...extraConfig,
    '',
  ].join('\n');
  const project = (name) => path.join(dir, 'projects', name);
  return { dir, config, project, notes: (name) => path.join(project(name), '.agent-memory/session-notes.jsonl') };
}

async function connect(server) {
  const client = new Client({ name: 'toolport-it-memory', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  // Caches each tool's outputSchema: callTool then validates every result against it.
  await client.listTools();
  return client;
}

// callTool that fails the test after `ms` instead of waiting for ever.
const call = (client, name, args, ms = 10000) =>
  withTimeout(client.callTool({ name, arguments: args }, undefined, { timeout: ms + 5000 }), ms, `${name} answered`);

// SIGTERM, then how long until the process was gone (or null when it was not within ms).
async function stopWithin(server, ms) {
  const child = server.child;
  if (child.exitCode !== null || child.signalCode !== null) return 0;
  const started = Date.now();
  const closed = new Promise((resolve) => child.once('close', resolve));
  child.kill('SIGTERM');
  const done = await Promise.race([closed.then(() => true), sleep(ms).then(() => false)]);
  if (!done) {
    child.kill('SIGKILL');
    await closed;
    return null;
  }
  return Date.now() - started;
}

describe('context memory', () => {
  it('answers a FIFO notes file with a clear error, keeps serving, and stops on SIGTERM', async () => {
    const w = world(['piped', 'fine']);
    execFileSync('mkfifo', [w.notes('piped')]);
    const server = await startHttpServer({ config: w.config, packs: 'context' });
    let client;
    try {
      client = await connect(server);
      // More calls than the pack has workers, all at once.
      const answers = await Promise.all(
        ['getDecisions', 'getBlockers', 'getHypotheses', 'getDecisions'].map((tool) =>
          call(client, tool, { projectPath: w.project('piped') }),
        ),
      );
      for (const res of answers) {
        assert.equal(res.isError, true, JSON.stringify(res));
        assert.equal(res.structuredContent.success, false);
        assert.equal(res.structuredContent.error.code, 'FILESYSTEM_ERROR');
        assert.match(res.structuredContent.error.message, /session-notes\.jsonl is a FIFO/);
        assert.match(res.structuredContent.error.suggestion, /Remove or rename/);
        assert.ok(!res.structuredContent.error.message.includes(w.dir), 'no machine path in the message');
      }
      const add = await call(client, 'addNote', { projectPath: w.project('piped'), type: 'blocker', content: 'x' });
      assert.equal(add.structuredContent.error.code, 'FILESYSTEM_ERROR', JSON.stringify(add));

      // The rest of the pack still answers.
      const ok = await call(client, 'addNote', { projectPath: w.project('fine'), type: 'decision', content: 'still served' });
      assert.equal(ok.structuredContent.success, true, JSON.stringify(ok));
      const decisions = await call(client, 'getDecisions', { projectPath: w.project('fine') });
      assert.deepEqual(decisions.structuredContent.data, ['still served']);
      const search = await call(client, 'searchArtifacts', {});
      assert.equal(search.structuredContent.success, true, JSON.stringify(search));

      await client.close().catch(() => {});
      client = null;
      const took = await stopWithin(server, 5000);
      assert.notEqual(took, null, `toolport did not stop within 5 s of SIGTERM\n${server.logs()}`);
    } finally {
      await client?.close().catch(() => {});
      await server.stop();
      rmSync(w.dir, { recursive: true, force: true });
    }
  });

  it('answers at the deadline while a worker is blocked on a lock another process holds, and still stops on SIGTERM', async () => {
    const w = world(['locked', 'other'], ['pipeline:', '  timeout_ms: 1500']);
    writeFileSync(w.notes('locked'), '{"type":"decision","content":"behind the lock","timestamp":"2025-11-05T10:00:00.000Z"}\n');
    // flock(1) holds an exclusive lock on the notes file until it is killed.
    const holder = track(spawn('flock', ['--exclusive', w.notes('locked'), 'sleep', '120'], { stdio: 'ignore' }));
    const lockedElsewhere = () => {
      try {
        execFileSync('flock', ['--nonblock', '--shared', w.notes('locked'), 'true']);
        return false;
      } catch {
        return true; // flock -n exits 1 while the lock is held
      }
    };
    await waitFor('flock(1) holding the notes file', lockedElsewhere, 10000);
    const server = await startHttpServer({ config: w.config, packs: 'context' });
    let client;
    try {
      client = await connect(server);
      const late = await Promise.all(
        [1, 2, 3].map(() => call(client, 'getDecisions', { projectPath: w.project('locked') }, 10000)),
      );
      for (const res of late) {
        assert.equal(res.isError, true, JSON.stringify(res));
        assert.equal(res.structuredContent.error.code, 'TIMEOUT', JSON.stringify(res.structuredContent));
      }
      // The blocked workers are stood in for: every context tool still answers.
      const ok = await call(client, 'addNote', { projectPath: w.project('other'), type: 'blocker', content: 'unblocked' });
      assert.equal(ok.structuredContent.success, true, JSON.stringify(ok));
      const blockers = await call(client, 'getBlockers', { projectPath: w.project('other') });
      assert.deepEqual(blockers.structuredContent.data, ['unblocked']);

      await client.close().catch(() => {});
      client = null;
      // Three threads are still blocked in flock(); shutdown does not wait for them.
      const took = await stopWithin(server, 5000);
      assert.notEqual(took, null, `toolport did not stop within 5 s of SIGTERM\n${server.logs()}`);
    } finally {
      holder.kill('SIGKILL');
      await client?.close().catch(() => {});
      await server.stop();
      rmSync(w.dir, { recursive: true, force: true });
    }
  });

  describe('30,000 notes', () => {
    let w;
    let server;
    let client;
    const total = 30000;
    // Note i at 2025-11-01T00:00Z plus i minutes; every third one a blocker, the rest decisions.
    const stamp = (i) => new Date(Date.UTC(2025, 10, 1) + i * 60000).toISOString();
    const typeOf = (i) => (i % 3 === 0 ? 'blocker' : 'decision');
    const decisionsNewestFirst = [];

    before(async () => {
      w = world(['big']);
      const lines = [];
      for (let i = 0; i < total; i++) {
        const content = `${typeOf(i)} ${i}: ${'context '.repeat(i % 13)}`.trim();
        if (typeOf(i) === 'decision') decisionsNewestFirst.unshift(content);
        lines.push(JSON.stringify({ type: typeOf(i), content, timestamp: stamp(i) }));
      }
      appendFileSync(w.notes('big'), `${lines.join('\n')}\n`);
      server = await startHttpServer({ config: w.config, packs: 'context' });
      client = await connect(server);
    });
    after(async () => {
      await client?.close().catch(() => {});
      await server?.stop();
      if (w) rmSync(w.dir, { recursive: true, force: true });
    });

    it('answers the first page without MCP_RESPONSE_TOO_LARGE, newest first', async () => {
      const res = await call(client, 'getDecisions', { projectPath: w.project('big') });
      assert.notEqual(res.isError, true, JSON.stringify(res.structuredContent?.error ?? res).slice(0, 500));
      assert.equal(res.structuredContent.success, true);
      assert.deepEqual(res.structuredContent.data, decisionsNewestFirst.slice(0, 50));
      assert.equal(res.structuredContent.metadata.decisionsCount, 50);
      assert.equal(typeof res.structuredContent.metadata.nextCursor, 'string');
    });

    it('pages through every decision with limit and cursor, each once, newest first', async () => {
      const seen = [];
      let cursor;
      let pages = 0;
      do {
        const args = { projectPath: w.project('big'), limit: 500 };
        if (cursor) args.cursor = cursor;
        const res = await call(client, 'getDecisions', args);
        assert.equal(res.structuredContent.success, true, JSON.stringify(res.structuredContent).slice(0, 500));
        assert.ok(res.structuredContent.data.length <= 500);
        seen.push(...res.structuredContent.data);
        cursor = res.structuredContent.metadata.nextCursor;
        pages++;
        assert.ok(pages < 1000, 'the pages never end');
      } while (cursor);
      assert.equal(seen.length, decisionsNewestFirst.length);
      assert.deepEqual(seen, decisionsNewestFirst);
    });

    it('selects by time with since and until', async () => {
      // Notes 100..159 (one hour from minute 100), both ends inclusive. A page that spends
      // its scan budget before reaching `since` hands a cursor on: follow it.
      const found = [];
      let cursor;
      do {
        const args = { projectPath: w.project('big'), since: stamp(100), until: stamp(159), limit: 500 };
        if (cursor) args.cursor = cursor;
        const res = await call(client, 'getBlockers', args);
        assert.equal(res.structuredContent.success, true, JSON.stringify(res.structuredContent).slice(0, 500));
        found.push(...res.structuredContent.data);
        cursor = res.structuredContent.metadata.nextCursor;
      } while (cursor);
      const expected = [];
      for (let i = 159; i >= 100; i--) if (typeOf(i) === 'blocker') expected.push(`blocker ${i}: ${'context '.repeat(i % 13)}`.trim());
      assert.deepEqual(found, expected);

      const bad = await call(client, 'getBlockers', { projectPath: w.project('big'), since: 'last tuesday' });
      assert.equal(bad.isError, true);
      assert.equal(bad.structuredContent.error.code, 'VALIDATION_ERROR');
      assert.match(bad.structuredContent.error.suggestion, /ISO|2025-11-05/);
    });

    it('keeps new notes first and durable while paging', async () => {
      const added = await call(client, 'addNote', { projectPath: w.project('big'), type: 'decision', content: 'the newest' });
      assert.equal(added.structuredContent.success, true, JSON.stringify(added));
      const res = await call(client, 'getDecisions', { projectPath: w.project('big'), limit: 2 });
      assert.deepEqual(res.structuredContent.data, ['the newest', decisionsNewestFirst[0]]);
    });
  });
});
