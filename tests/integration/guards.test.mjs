// Guardrail hooks (`guards:`) through the real binary: a webhook guard served by an HTTP
// server written here (allow, deny, modify the arguments, modify the result, too slow
// under closed and open, a reply that is not JSON, a guard that is down), and an MCP
// server with SEP-2624 interceptors as a child process (lib/interceptor_server.mjs). The
// official SDK is the client; a JSON-RPC batch (2025-03-26) and the stdio transport go
// through the same checks.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readJsonLines, startHttpServer, assertAlive, post, initializeSession, freePort, runToolport, waitFor, TOOLPORT_BIN } from './lib/harness.mjs';
import { INTERCEPTOR_SERVER, listenHttp } from './lib/interceptor_server.mjs';
import { startOtlpReceiver } from './lib/otlp_receiver.mjs';

const SSN = '123-45-6789';

// The webhook: what it answers depends on `mode`; every request it got is in `seen`.
function startWebhook() {
  const hook = { mode: 'allow', seen: [] };
  hook.server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const ask = JSON.parse(body);
      hook.seen.push({ ask, headers: req.headers });
      const reply = (value) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(typeof value === 'string' ? value : JSON.stringify(value));
      };
      switch (hook.mode) {
        case 'deny':
          return reply({ decision: 'deny', reason: 'no calls today', suggestion: 'Ask again tomorrow' });
        case 'deny_ssn':
          return reply(
            JSON.stringify(ask.arguments).includes(SSN) ? { decision: 'deny', reason: 'the arguments hold an SSN' } : { decision: 'allow' },
          );
        case 'modify_args':
          return reply(ask.phase === 'before' ? { decision: 'modify', arguments: { ...ask.arguments, limit: 7 } } : { decision: 'allow' });
        case 'modify_result':
          return reply(
            ask.phase === 'after'
              ? { decision: 'modify', result: { content: [{ type: 'text', text: '[redacted by the guard]' }] } }
              : { decision: 'allow' },
          );
        case 'slow':
          return setTimeout(() => reply({ decision: 'allow' }), 1500);
        case 'malformed':
          return reply('this is not a verdict');
        default:
          return reply({ decision: 'allow' });
      }
    });
  });
  return new Promise((resolve) => hook.server.listen(0, '127.0.0.1', () => resolve(hook)));
}

const webhookConfig = (port, downPort) => `
guards:
  hook:
    webhook:
      url: http://127.0.0.1:${port}/verdict
      headers: {X-Guard-Key: "\${GUARD_KEY}"}
    timeout_ms: 400
  hook_open:
    webhook: {url: "http://127.0.0.1:${port}/verdict"}
    timeout_ms: 400
    failure_mode: open
    phases: [before]
  down:
    webhook: {url: "http://127.0.0.1:${downPort}/verdict"}
    timeout_ms: 400
tools:
  test_validate: {guards: [hook]}
  test_counter: {guards: [hook_open]}
sources:
  conformance: {guards: [down]}
`;

const code = (r) => r.structuredContent?.error_code ?? (r.isError ? 'TOOL_ERROR' : 'OK');

describe('webhook guards (SDK client, real binary, real HTTP webhook)', () => {
  let hook;
  let server;
  let client;
  let config;
  let auditDir;
  let auditFile;

  before(async () => {
    hook = await startWebhook();
    auditDir = mkdtempSync(path.join(os.tmpdir(), 'toolport-guards-audit-'));
    auditFile = path.join(auditDir, 'audit.jsonl');
    config = webhookConfig(hook.server.address().port, await freePort());
    server = await startHttpServer({
      config: `${config}audit: {enabled: true, path: ${JSON.stringify(auditFile)}, flush_interval_ms: 50, include_arguments: true}\n`,
      env: { TOOLPORT_TEST_PACK: '1', GUARD_KEY: 'k-123' },
      packs: 'conformance,testing',
    });
    client = new Client({ name: 'guards-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  });

  after(async () => {
    await client?.close();
    await server?.stop();
    hook?.server.close();
    if (auditDir) rmSync(auditDir, { recursive: true, force: true });
  });

  it('allow: the guard sees the arguments before and the result after', async () => {
    hook.mode = 'allow';
    hook.seen.length = 0;
    const r = await client.callTool({ name: 'test_validate', arguments: { limit: 5 } });
    assert.equal(code(r), 'OK');
    assert.equal(hook.seen.length, 2);
    const [first, second] = hook.seen;
    assert.equal(first.ask.phase, 'before');
    assert.equal(first.ask.tool, 'test_validate');
    assert.equal(first.ask.guard, 'hook');
    assert.deepEqual(first.ask.arguments, { limit: 5 });
    assert.ok('request_id' in first.ask);
    assert.equal(first.headers['x-guard-key'], 'k-123');
    assert.equal(second.ask.phase, 'after');
    assert.deepEqual(second.ask.result.structuredContent, { limit: 5 });
  });

  it('deny: a tool error MCP_GUARD_DENIED with the reason and suggestion', async () => {
    hook.mode = 'deny';
    const r = await client.callTool({ name: 'test_validate', arguments: { limit: 5 } });
    assert.equal(r.isError, true);
    assert.equal(code(r), 'MCP_GUARD_DENIED');
    assert.match(r.structuredContent.error, /Guard "hook" denied the call: no calls today/);
    assert.equal(r.structuredContent.suggestion, 'Ask again tomorrow');
    assert.equal(r.structuredContent.guard, 'hook');
    assert.equal(r.structuredContent.phase, 'before');
    assert.match(r.content[0].text, /MCP_GUARD_DENIED/);
  });

  it('modify: the tool runs with the guard\'s arguments', async () => {
    hook.mode = 'modify_args';
    const r = await client.callTool({ name: 'test_validate', arguments: { limit: 5 } });
    assert.equal(code(r), 'OK');
    assert.deepEqual(r.structuredContent, { limit: 7 });
  });

  it('modify: the client gets the guard\'s result', async () => {
    hook.mode = 'modify_result';
    const r = await client.callTool({ name: 'test_validate', arguments: { limit: 5 } });
    assert.equal(code(r), 'OK');
    assert.equal(r.content[0].text, '[redacted by the guard]');
    assert.equal(r.structuredContent, undefined);
  });

  it("each call's audit record lists what every guard said, in order", async () => {
    // The record of the call with { limit }: the arguments are in records (include_arguments).
    const recordOf = (limit) =>
      waitFor(`the audit record of limit ${limit}`, () => {
        return readJsonLines(auditFile).find((r) => r.method === 'tools/call' && r.target === 'test_validate' && r.arguments?.limit === limit);
      });
    hook.mode = 'modify_args';
    await client.callTool({ name: 'test_validate', arguments: { limit: 41 } });
    hook.mode = 'deny';
    await client.callTool({ name: 'test_validate', arguments: { limit: 42 } });
    const modified = await recordOf(41);
    const denied = await recordOf(42);
    assert.deepEqual(modified.guards, [
      { guard: 'hook', phase: 'before', decision: 'modify' },
      { guard: 'hook', phase: 'after', decision: 'allow' },
    ]);
    assert.equal(modified.outcome, 'ok');
    // A denial before the call: the tool never ran, so there is no "after" verdict.
    assert.deepEqual(denied.guards, [{ guard: 'hook', phase: 'before', decision: 'deny' }]);
    assert.equal(denied.code, 'MCP_GUARD_DENIED');
  });

  it('too slow: closed refuses with MCP_GUARD_UNAVAILABLE, open lets the call through', async () => {
    hook.mode = 'slow';
    const started = Date.now();
    const r = await client.callTool({ name: 'test_validate', arguments: { limit: 5 } });
    assert.ok(Date.now() - started < 1400, 'answered at the guard\'s timeout, not after its reply');
    assert.equal(code(r), 'MCP_GUARD_UNAVAILABLE');
    assert.match(r.structuredContent.error, /no verdict within 400 ms/);
    assert.equal(r.structuredContent.transient, true);
    const open = await client.callTool({ name: 'test_counter', arguments: { key: 'slow' } });
    assert.equal(code(open), 'OK');
    assert.match(server.logs(), /guard hook_open: could not check the arguments of test_counter/);
  });

  it('a reply that is no verdict is a failure (closed)', async () => {
    hook.mode = 'malformed';
    const r = await client.callTool({ name: 'test_validate', arguments: { limit: 5 } });
    assert.equal(code(r), 'MCP_GUARD_UNAVAILABLE');
    assert.match(r.structuredContent.error, /its reply is not JSON/);
  });

  it('a guard that is down refuses the calls of the source it guards', async () => {
    const r = await client.callTool({ name: 'test_simple_text', arguments: {} });
    assert.equal(code(r), 'MCP_GUARD_UNAVAILABLE');
    assert.match(r.structuredContent.error, /Guard "down" could not check the call/);
    assertAlive(server);
  });

  it('a JSON-RPC batch of tools/call (2025-03-26) passes the same checks', async () => {
    hook.mode = 'deny_ssn';
    const { sessionId, protocolVersion } = await initializeSession(server, '2025-03-26');
    const call = (id, args) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'test_validate', arguments: args } });
    const res = await post(server, [call(11, { limit: 5, filters: { naics: SSN } }), call(12, { limit: 6 })], { sessionId, protocolVersion });
    assert.equal(res.status, 200, res.text);
    const denied = res.messages.find((m) => m.id === 11);
    const allowed = res.messages.find((m) => m.id === 12);
    // 2025-03-26 has no structuredContent: the error is in the text.
    assert.equal(denied.result.isError, true, res.text);
    assert.match(denied.result.content[0].text, /MCP_GUARD_DENIED: Guard "hook" denied the call: the arguments hold an SSN/);
    assert.notEqual(allowed.result.isError, true, res.text);
    assert.match(allowed.result.content[0].text, /"limit":\s*6/);
  });

  it('counts verdicts in /metrics', async () => {
    const text = await (await fetch(`${server.base}/metrics`)).text();
    assert.match(text, /toolport_guard_checks_total\{guard="hook",outcome="deny",phase="before"\} [1-9]/);
    assert.match(text, /toolport_guard_checks_total\{guard="hook",outcome="failed_closed",phase="before"\} [1-9]/);
    assert.match(text, /toolport_guard_checks_total\{guard="hook_open",outcome="failed_open",phase="before"\} [1-9]/);
  });

  it('over stdio the guard denies too', async () => {
    hook.mode = 'deny_ssn';
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-guards-'));
    const file = path.join(dir, 'toolport.yaml');
    writeFileSync(file, config);
    const transport = new StdioClientTransport({
      command: TOOLPORT_BIN,
      args: ['serve', '--stdio', '--packs', 'conformance,testing', '--config', file],
      env: { ...process.env, TOOLPORT_TEST_PACK: '1', GUARD_KEY: 'k-123' },
      stderr: 'pipe',
    });
    const stdio = new Client({ name: 'guards-stdio', version: '1.0.0' });
    try {
      await stdio.connect(transport);
      const denied = await stdio.callTool({ name: 'test_validate', arguments: { limit: 5, filters: { naics: SSN } } });
      assert.equal(code(denied), 'MCP_GUARD_DENIED');
      const allowed = await stdio.callTool({ name: 'test_validate', arguments: { limit: 5 } });
      assert.deepEqual(allowed.structuredContent, { limit: 5 });
    } finally {
      await stdio.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('MCP interceptor guards (SEP-2624, an SDK server as a child)', () => {
  let server;
  let client;
  let remote;

  before(async () => {
    remote = await listenHttp();
    const mcp = (names) => `{command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(INTERCEPTOR_SERVER)}], interceptors: [${names.join(', ')}]}`;
    server = await startHttpServer({
      config: `
guards:
  redact:
    mcp: ${mcp(['redactor', 'audit-logger', 'flaky'])}
    timeout_ms: 5000
  pii:
    mcp: ${mcp(['pii-validator'])}
    timeout_ms: 5000
  broken:
    mcp: ${mcp(['broken'])}
    timeout_ms: 5000
  liar:
    mcp: ${mcp(['liar'])}
    timeout_ms: 5000
  remote_pii:
    mcp: {url: "${remote.url}", bearer_token_env: INTERCEPTOR_TOKEN, interceptors: [pii-validator]}
    timeout_ms: 5000
tools:
  test_validate: {guards: [redact]}
  test_simple_text: {guards: [redact]}
  test_counter: {guards: [pii]}
  test_sleep: {guards: [broken]}
  test_large: {guards: [liar]}
  test_sampling: {guards: [remote_pii]}
`,
      env: { TOOLPORT_TEST_PACK: '1', INTERCEPTOR_TOKEN: 'tok-456' },
      packs: 'conformance,testing',
    });
    client = new Client({ name: 'interceptor-guards-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  });

  after(async () => {
    await client?.close();
    await server?.stop();
    await remote?.close();
  });

  it('a mutator redacts the arguments; audit-mode and fail-open validators do not block', async () => {
    const r = await client.callTool({ name: 'test_validate', arguments: { limit: 5, filters: { naics: SSN } } });
    assert.equal(code(r), 'OK', JSON.stringify(r));
    assert.deepEqual(r.structuredContent, { limit: 5, filters: { naics: '[ssn]' } });
  });

  it('a mutator rewrites the result', async () => {
    const r = await client.callTool({ name: 'test_simple_text', arguments: {} });
    assert.equal(code(r), 'OK', JSON.stringify(r));
    assert.equal(r.content[0].text, 'This is a [mutated] text response for testing.');
  });

  it('a validator denies with its message', async () => {
    const denied = await client.callTool({ name: 'test_counter', arguments: { key: SSN } });
    assert.equal(code(denied), 'MCP_GUARD_DENIED');
    assert.match(denied.structuredContent.error, /interceptor pii-validator: the arguments hold an SSN/);
    const allowed = await client.callTool({ name: 'test_counter', arguments: { key: 'fine' } });
    assert.equal(code(allowed), 'OK');
  });

  it('a failing fail-closed interceptor and a malformed result refuse the call', async () => {
    const broken = await client.callTool({ name: 'test_sleep', arguments: { ms: 0 } });
    assert.equal(code(broken), 'MCP_GUARD_UNAVAILABLE');
    assert.match(broken.structuredContent.error, /interceptor broken failed/);
    const liar = await client.callTool({ name: 'test_large', arguments: { bytes: 10 } });
    assert.equal(code(liar), 'MCP_GUARD_UNAVAILABLE');
    assert.match(liar.structuredContent.error, /did not modify the payload but returns another one/);
    assertAlive(server);
  });

  it('a new child replaces an interceptor server that died', async () => {
    const interceptorChildren = () =>
      execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(server.child.pid)], { encoding: 'utf8' })
        .split('\n')
        .filter((line) => line.includes('interceptor_server.mjs'))
        .map((line) => Number(line.trim().split(/\s+/)[0]));
    const children = interceptorChildren();
    assert.equal(children.length, 4, 'one child per MCP guard');
    for (const pid of children) process.kill(pid, 'SIGKILL');
    // Until the guard has noticed and reconnected, its calls fail closed; then they pass again.
    await waitFor('the pii guard back', async () => code(await client.callTool({ name: 'test_counter', arguments: { key: 'fine' } })) === 'OK');
    const denied = await client.callTool({ name: 'test_counter', arguments: { key: SSN } });
    assert.equal(code(denied), 'MCP_GUARD_DENIED');
    assert.ok(interceptorChildren().some((pid) => !children.includes(pid)), 'a new child was started');
    assertAlive(server);
  });

  it('an interceptor server over Streamable HTTP denies too, asked with its bearer token', async () => {
    const denied = await client.callTool({ name: 'test_sampling', arguments: { prompt: `my SSN is ${SSN}` } });
    assert.equal(code(denied), 'MCP_GUARD_DENIED', JSON.stringify(denied));
    assert.match(denied.structuredContent.error, /Guard "remote_pii" denied the call: interceptor pii-validator/);
    assert.ok(remote.requests.length > 0);
    assert.ok(remote.requests.every((h) => h.authorization === 'Bearer tok-456'));
  });
});

describe('guards in the configuration file', () => {
  const check = async (yaml) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-guards-config-'));
    const file = path.join(dir, 'toolport.yaml');
    writeFileSync(file, yaml);
    try {
      return await runToolport(['config', 'check', file]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('refuses a guard name no guards: entry declares, naming the line and the declared ones', async () => {
    const r = await check('guards:\n  pii: {webhook: {url: "http://127.0.0.1:9/x"}}\ntools:\n  t: {guards: [pii, pi]}\n');
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /:4.*no guard "pi" under guards: \(declared: pii\)/);
  });

  it('summarizes each guard: how it is reached (no query, no header), how it is used, where it is attached', async () => {
    const r = await check(
      'guards:\n  pii: {webhook: {url: "https://guard.example/check?key=s3cret", headers: {X-Key: hidden}}, failure_mode: open, phases: [before]}\n' +
        '  spare: {mcp: {command: node, args: [x.mjs]}}\nsources:\n  tango: {guards: [pii]}\ntools:\n  t: {guards: [pii]}\n',
    );
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /guard pii: webhook https:\/\/guard\.example\/check \(before, timeout 2000 ms, failure open\); on: sources\.tango, tools\.t/);
    assert.match(r.stdout, /guard spare: mcp stdio node \(before\+after, timeout 2000 ms, failure per interceptor\); on: nothing/);
    assert.doesNotMatch(r.stdout, /s3cret|hidden/);
  });

  it('refuses guards attached where the stage list leaves out guard, unless disabled on purpose', async () => {
    const guard = 'guards:\n  pii: {webhook: {url: "http://127.0.0.1:9/x"}}\n';
    let r = await check(`${guard}pipeline:\n  stages: [validate, cache, timeout]\ntools:\n  t: {guards: [pii]}\n`);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /tools\.t.*leaves out the guard stage, so the guards attached here would never run/);
    r = await check(`${guard}sources:\n  tango: {guards: [pii], stages: [validate, timeout]}\n`);
    assert.match(r.stderr, /sources\.tango.*leaves out the guard stage/);
    r = await check(`${guard}sources:\n  tango: {guards: [pii]}\ntools:\n  t: {disable: [guard]}\n`);
    assert.equal(r.status, 0, r.stderr);
    r = await check(`${guard}tools:\n  t: {guards: [pii], disable: [guard]}\n`);
    assert.equal(r.status, 0, r.stderr);
  });

  it('refuses a guard with both or neither of webhook: and mcp:, and a bad failure_mode', async () => {
    let r = await check('guards:\n  g: {timeout_ms: 100}\n');
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /exactly one of webhook: .* or mcp:/);
    r = await check('guards:\n  g: {webhook: {url: ftp://x}}\n');
    assert.match(r.stderr, /must be an http:\/\/ or https:\/\/ URL/);
    r = await check('guards:\n  g: {webhook: {url: "http://x/"}, failure_mode: sometimes}\n');
    assert.match(r.stderr, /failure_mode.*must be .*open.*closed/);
    r = await check('guards:\n  g: {webhook: {url: "http://x/"}, phases: [during]}\n');
    assert.match(r.stderr, /unknown phase "during"/);
  });
});

describe('guards in a trace', () => {
  it('the webhook request is a span of the call, and the verdict an event of its server span', async (t) => {
    const receiver = await startOtlpReceiver();
    const hook = await startWebhook();
    hook.mode = 'deny';
    const clean = Object.fromEntries(Object.keys(process.env).filter((k) => k.startsWith('OTEL_')).map((k) => [k, '']));
    const server = await startHttpServer({
      config: webhookConfig(hook.server.address().port, await freePort()),
      env: { ...clean, TOOLPORT_TEST_PACK: '1', GUARD_KEY: 'k', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'guards-it', OTEL_BSP_SCHEDULE_DELAY: '50' },
      packs: 'conformance,testing',
    });
    const client = new Client({ name: 'guards-trace', version: '1.0.0' });
    t.after(async () => {
      await client.close();
      await server.stop();
      hook.server.close();
      await receiver.close();
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    const trace = 'b'.repeat(32);
    const r = await client.callTool({ name: 'test_validate', arguments: { limit: 5 }, _meta: { traceparent: `00-${trace}-${'c'.repeat(16)}-01` } });
    assert.equal(code(r), 'MCP_GUARD_DENIED');
    let inbound;
    await waitFor('the call\'s server span', () => {
      inbound = receiver.spans().find((s) => s.traceId === trace && s.kind === 2);
      return Boolean(inbound);
    });
    assert.ok(inbound.events.some((e) => e.name === 'guard.deny' && e.attributes.guard === 'hook' && e.attributes.phase === 'before'), JSON.stringify(inbound.events));
    // The webhook got the trace: its request is a CLIENT span of the same trace.
    const header = hook.seen.at(-1).headers.traceparent;
    assert.match(header ?? '', new RegExp(`^00-${trace}-[0-9a-f]{16}-01$`));
    await waitFor('the webhook request\'s span', () => receiver.spans().some((s) => s.traceId === trace && s.kind === 3 && header.includes(s.spanId)));
  });
});
