// The audit log with the real binary: one record per tools/call, resources/read and
// prompts/get on every transport (stdio, Streamable HTTP stateful and stateless, legacy
// SSE, a JSON-RPC batch), the caller's principal and never its token, records that survive
// kill -9, and `toolport audit` reading and following them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, appendFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import {
  TOOLPORT_BIN,
  serverForTest,
  startHttpServer,
  initializeSession,
  post,
  runToolport,
  sleep,
  track,
  waitFor,
} from './lib/harness.mjs';

const TOKEN = 'audit-test-token-0123456789abcdef';

function tempDir(t) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-audit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const auditConfig = (file, extra = '') =>
  `audit:\n  enabled: true\n  path: ${file}\n  flush_interval_ms: 100\n${extra}`;

function records(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

async function recordsWhen(file, predicate, what) {
  let found = [];
  await waitFor(what, () => {
    found = records(file);
    return predicate(found);
  });
  return found;
}

const find = (all, method, target) => all.filter((r) => r.method === method && r.target === target);

describe('audit log', () => {
  it('stdio: a tool call, a tool error, a resource read and a prompt get each leave a record', async (t) => {
    const dir = tempDir(t);
    const file = path.join(dir, 'audit.jsonl');
    const config = path.join(dir, 'toolport.yaml');
    writeFileSync(config, auditConfig(file, '  include_arguments: true\n'));
    const transport = new StdioClientTransport({
      command: TOOLPORT_BIN,
      args: ['serve', '--stdio', '--packs', 'conformance', '--config', config],
      stderr: 'pipe',
    });
    const client = new Client({ name: 'audit-stdio', version: '1.0.0' });
    await client.connect(transport);
    t.after(() => client.close());
    const ok = await client.callTool({ name: 'greet', arguments: { name: 'Ann' } });
    assert.ok(!ok.isError);
    // Refused by greet's schema, and recorded with its arguments, the secret-looking one redacted.
    const refused = await client.callTool({ name: 'greet', arguments: { name: 'Bo', api_key: 'sk-live-secret-value' } });
    assert.equal(refused.isError, true);
    const failed = await client.callTool({ name: 'test_error_handling', arguments: {} });
    assert.equal(failed.isError, true);
    await client.readResource({ uri: 'test://static-text' });
    await client.getPrompt({ name: 'test_simple_prompt' });
    await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }));
    const all = await recordsWhen(file, (r) => r.length >= 6, 'six records');

    const [greet, invalid] = find(all, 'tools/call', 'greet');
    assert.equal(greet.outcome, 'ok');
    assert.equal(greet.session, 'stdio');
    assert.equal(greet.source, 'conformance');
    assert.equal(greet.cache, 'bypass');
    assert.equal(greet.downstream_calls, 0);
    assert.match(greet.args_sha256, /^[0-9a-f]{64}$/);
    assert.deepEqual(greet.arguments, { name: 'Ann' });
    assert.equal(invalid.outcome, 'tool_error');
    assert.equal(invalid.code, 'INVALID_ARGUMENT');
    assert.equal(invalid.arguments.name, 'Bo');
    assert.equal(invalid.arguments.api_key, '[redacted]');
    assert.equal(typeof greet.duration_ms, 'number');
    assert.ok(!Number.isNaN(Date.parse(greet.ts)));
    const [error] = find(all, 'tools/call', 'test_error_handling');
    assert.equal(error.outcome, 'tool_error');
    assert.ok(error.code);
    assert.equal(find(all, 'resources/read', 'test://static-text')[0].outcome, 'ok');
    assert.equal(find(all, 'prompts/get', 'test_simple_prompt')[0].outcome, 'ok');
    const [unknown] = find(all, 'tools/call', 'no_such_tool');
    assert.equal(unknown.outcome, 'protocol_error');
    assert.equal(unknown.code, '-32602');
    assert.doesNotMatch(readFileSync(file, 'utf8'), /sk-live-secret-value/);
  });

  it('HTTP: every transport is recorded with the bearer token\'s principal, never the token', async (t) => {
    const dir = tempDir(t);
    const file = path.join(dir, 'audit.jsonl');
    const server = await serverForTest(t, {
      config: `http:\n  bearer_tokens_env: AUDIT_TOKENS\n${auditConfig(file)}`,
      env: { AUDIT_TOKENS: TOKEN },
    });
    const auth = { Authorization: `Bearer ${TOKEN}` };
    // Streamable HTTP, stateful, with the official SDK.
    const client = new Client({ name: 'audit-http', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: auth } }));
    await client.callTool({ name: 'greet', arguments: { name: 'stateful' } });
    await client.readResource({ uri: 'test://static-text' });
    await client.getPrompt({ name: 'test_simple_prompt' });
    await client.close();
    // Legacy SSE.
    const legacy = new Client({ name: 'audit-sse', version: '1.0.0' });
    await legacy.connect(
      new SSEClientTransport(new URL(`${server.base}/sse`), {
        requestInit: { headers: auth },
        eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...init?.headers, ...auth } }) },
      }),
    );
    await legacy.callTool({ name: 'greet', arguments: { name: 'legacy' } });
    await legacy.close();
    // Stateless 2026-07-28.
    const stateless = await post(
      server,
      {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: {
          name: 'greet',
          arguments: { name: 'stateless' },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
            'io.modelcontextprotocol/clientInfo': { name: 'audit-stateless', version: '1.0.0' },
          },
        },
      },
      { headers: { ...auth, 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'greet' } },
    );
    assert.equal(stateless.status, 200, stateless.text);
    // A JSON-RPC batch (2025-03-26).
    const { sessionId } = await initializeSession(server, '2025-03-26', auth);
    const batch = await post(
      server,
      [
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'greet', arguments: { name: 'batch1' } } },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'greet', arguments: { name: 'batch2' } } },
      ],
      { sessionId, protocolVersion: '2025-03-26', headers: auth },
    );
    assert.equal(batch.status, 200, batch.text);

    const all = await recordsWhen(file, (r) => find(r, 'tools/call', 'greet').length >= 5, 'five greet records');
    const greets = find(all, 'tools/call', 'greet');
    assert.equal(greets.length, 5);
    const digests = new Set(greets.map((r) => r.args_sha256));
    assert.equal(digests.size, 5, 'each call its own arguments digest');
    for (const r of all) {
      assert.match(r.principal, /^bearer:[0-9a-f]{16}$/, JSON.stringify(r));
      // A stateless (2026-07-28) request has no session.
      if (r.request_id !== '7') assert.ok(r.session, JSON.stringify(r));
    }
    assert.equal(find(all, 'resources/read', 'test://static-text').length, 1);
    assert.equal(find(all, 'prompts/get', 'test_simple_prompt').length, 1);
    assert.equal(new Set(greets.map((r) => r.session)).size, 4, 'stateful, legacy and batch sessions, and none');
    assert.ok(!readFileSync(file, 'utf8').includes(TOKEN), 'the token is never written');
  });

  it('kill -9 after acknowledged calls loses nothing older than the flush interval', async (t) => {
    const dir = tempDir(t);
    const file = path.join(dir, 'audit.jsonl');
    const server = await startHttpServer({ config: auditConfig(file, '  fsync: interval\n') });
    t.after(() => server.stop());
    const client = new Client({ name: 'audit-kill', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    for (let i = 0; i < 25; i++) {
      const r = await client.callTool({ name: 'greet', arguments: { name: `k${i}` } });
      assert.ok(!r.isError);
    }
    await sleep(400); // more than the flush interval (100 ms)
    const exited = new Promise((resolve) => server.child.once('exit', (code, signal) => resolve(signal)));
    server.child.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL');
    const greets = find(records(file), 'tools/call', 'greet');
    assert.equal(greets.length, 25);
  });

  it('toolport audit filters the file, skips garbled lines, and --follow prints new records', async (t) => {
    const dir = tempDir(t);
    const file = path.join(dir, 'audit.jsonl');
    const server = await serverForTest(t, { config: auditConfig(file) });
    const client = new Client({ name: 'audit-cli', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    t.after(() => client.close());
    await client.callTool({ name: 'greet', arguments: { name: 'one' } });
    await client.callTool({ name: 'test_error_handling', arguments: {} });
    await client.readResource({ uri: 'test://static-text' });
    await recordsWhen(file, (r) => r.length >= 3, 'three records');
    appendFileSync(file, 'this is not a record\n');

    const byTool = await runToolport(['audit', '--file', file, '--tool', 'greet', '--json']);
    assert.equal(byTool.status, 0, byTool.stderr);
    const lines = byTool.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((r) => r.target), ['greet']);
    assert.match(byTool.stderr, /skipped 1 line/);

    const errors = await runToolport(['audit', '--file', file, '--outcome', 'error', '--json']);
    assert.deepEqual(errors.stdout.trim().split('\n').map((l) => JSON.parse(l).target), ['test_error_handling']);
    const future = await runToolport(['audit', '--file', file, '--since', '2199-01-01T00:00:00Z']);
    assert.equal(future.status, 0);
    assert.equal(future.stdout, '');
    const recent = await runToolport(['audit', '--file', file, '--since', '1h', '--limit', '2']);
    assert.equal(recent.stdout.trim().split('\n').length, 2);
    assert.match(recent.stdout, /resources\/read test:\/\/static-text/);
    const bad = await runToolport(['audit', '--file', file, '--since', 'last tuesday']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /since must be/);

    // --follow: the records written after it started.
    const follower = track(spawn(TOOLPORT_BIN, ['audit', '--file', file, '--follow', '--json', '--limit', '0', '--tool', 'greet']));
    let out = '';
    follower.stdout.on('data', (d) => (out += d));
    t.after(() => follower.kill('SIGKILL'));
    await waitFor('the existing record', () => out.includes('"greet"'));
    await client.callTool({ name: 'greet', arguments: { name: 'followed' } });
    await client.callTool({ name: 'test_error_handling', arguments: {} });
    await waitFor('the followed record', () => out.trim().split('\n').length >= 2, 10000);
    const followed = out.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(followed.map((r) => r.target), ['greet', 'greet']);
  });

  it('GET /audit and GET /orchestration: refused without a credential, answered with one; the CLI asks them', async (t) => {
    const dir = tempDir(t);
    const file = path.join(dir, 'audit.jsonl');
    const server = await serverForTest(t, {
      config: `http:\n  bearer_tokens_env: AUDIT_TOKENS\ntools:\n  greet:\n    service: demo\n${auditConfig(file)}`,
      env: { AUDIT_TOKENS: TOKEN },
    });
    const auth = { Authorization: `Bearer ${TOKEN}` };
    const client = new Client({ name: 'audit-endpoint', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: auth } }));
    t.after(() => client.close());
    await client.callTool({ name: 'greet', arguments: { name: 'one' } });
    await client.callTool({ name: 'test_error_handling', arguments: {} });
    await recordsWhen(file, (r) => r.length >= 2, 'two records');

    for (const p of ['/audit', '/orchestration']) {
      const anonymous = await fetch(`${server.base}${p}`);
      assert.equal(anonymous.status, 401, p);
      assert.match((await anonymous.json()).error.message, /Unauthorized/);
      const wrong = await fetch(`${server.base}${p}`, { headers: { Authorization: 'Bearer not-the-token' } });
      assert.equal(wrong.status, 401, p);
      const foreign = await fetch(`${server.base}${p}`, { headers: { ...auth, Origin: 'https://evil.example' } });
      assert.equal(foreign.status, 403, p);
    }
    const all = await fetch(`${server.base}/audit`, { headers: auth });
    assert.equal(all.status, 200);
    assert.equal(all.headers.get('content-type'), 'application/json');
    const body = await all.json();
    assert.equal(body.source, 'file');
    assert.deepEqual(body.records.map((r) => r.target), ['greet', 'test_error_handling']);
    const filtered = await (await fetch(`${server.base}/audit?tool=greet&outcome=ok&since=1h&limit=5`, { headers: auth })).json();
    assert.deepEqual(filtered.records.map((r) => r.target), ['greet']);
    const bad = await fetch(`${server.base}/audit?since=whenever`, { headers: auth });
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error, /since must be/);
    const post = await fetch(`${server.base}/audit`, { method: 'POST', headers: auth });
    assert.equal(post.status, 405);
    const summary = await fetch(`${server.base}/orchestration`, { headers: auth });
    assert.equal(summary.status, 200);
    const s = await summary.json();
    const demo = s.server_health.find((h) => h.server_id === 'demo');
    assert.ok(demo, JSON.stringify(s));
    assert.equal(demo.total_calls, 1);
    assert.equal(demo.failure_rate, 0);
    assert.equal(demo.breaker, 'closed');
    assert.equal(typeof demo.avg_response_ms, 'number');
    assert.equal(typeof s.sessions, 'number');

    const cli = await runToolport(['audit', '--url', server.url, '--token', TOKEN, '--outcome', 'error', '--json']);
    assert.equal(cli.status, 0, cli.stderr);
    assert.deepEqual(cli.stdout.trim().split('\n').map((l) => JSON.parse(l).target), ['test_error_handling']);
    const refused = await runToolport(['audit', '--url', server.url], { env: { TOOLPORT_TOKEN: '' } });
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /HTTP 401/);
    const sum = await runToolport(['audit', 'summary', '--url', server.url, '--token', TOKEN, '--json']);
    assert.equal(sum.status, 0, sum.stderr);
    assert.equal(JSON.parse(sum.stdout).server_health[0].server_id, 'demo');
    const table = await runToolport(['audit', 'summary', '--url', server.url, '--token', TOKEN]);
    assert.match(table.stdout, /^demo +1 +0 +0 +\d+ +closed$/m);
  });

  it('an unwritable audit path stops the start with a clear error', async (t) => {
    const dir = tempDir(t);
    writeFileSync(path.join(dir, 'file'), 'x');
    const config = path.join(dir, 'toolport.yaml');
    writeFileSync(config, auditConfig(path.join(dir, 'file', 'audit.jsonl')));
    const r = await runToolport(['serve', '--stdio', '--packs', 'conformance', '--config', config], { timeoutMs: 10000 });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /audit: cannot open the audit file/);
  });
});
