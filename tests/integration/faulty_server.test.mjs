// The fault-injecting upstream fixture (tests/fixtures/upstream/faulty_server.mjs) driven
// directly, without toolport: first by the official SDK's Client over stdio and over
// Streamable HTTP (each behaviour a gateway test relies on), then on the wire (what the SDK
// hides: exit statuses, bytes that are not JSON, sessions, the start-up options).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { instrumentTransport, parseSse, post, request, sleep, track, withTimeout } from './lib/harness.mjs';
import {
  FAULTY_SERVER,
  PROTOCOL_VERSIONS,
  TOOL_NAMES,
  faultyStdio,
  startFaultyHttp,
} from '../fixtures/upstream/faulty_server.mjs';

// The fixture is tested on its own, without toolport: once per CI run is enough, so the
// second pass of the suites (tests/run_suites.sh with I/O threads, on the sanitizer
// build) skips it.
const SECOND_PASS = { skip: process.env.TOOLPORT_TEST_IO_THREADS ? 'fixture only: tested in the first pass' : false };

const INIT = (protocolVersion = '2025-11-25') => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'faulty-wire-test', version: '1.0.0' } },
});

// A promise with its resolve, for a notification a test waits for.
function signal() {
  let resolve;
  const promise = new Promise((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// An SDK Client connected to a fresh fixture over `mode`, with sampling, elicitation and
// roots handlers that record what they were asked.
async function connect(mode, args = []) {
  let transport;
  let fixture = null;
  let stderr = '';
  if (mode === 'stdio') {
    transport = new StdioClientTransport({ ...faultyStdio(args), stderr: 'pipe' });
    transport.stderr?.on('data', (d) => {
      stderr += d;
    });
  } else {
    fixture = await startFaultyHttp(args);
    track(fixture.child);
    transport = new StreamableHTTPClientTransport(new URL(fixture.url));
  }
  const client = new Client(
    { name: 'faulty-server-test', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
  );
  const seen = { sampling: [], elicitation: [], logs: [], updated: [], listChanged: 0 };
  const waiters = { listChanged: signal(), updated: signal(), log: signal() };
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    seen.sampling.push(req.params);
    return { model: 'test-model', role: 'assistant', content: { type: 'text', text: `sampled<${req.params.messages[0].content.text}>` } };
  });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    seen.elicitation.push(req.params);
    if (req.params.message === 'please refuse') throw new Error('no elicitation today');
    return { action: 'accept', content: { answer: 'forty-two' } };
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }));
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    seen.listChanged += 1;
    waiters.listChanged.resolve();
  });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    seen.updated.push(n.params.uri);
    waiters.updated.resolve(n.params.uri);
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    seen.logs.push(n.params);
    waiters.log.resolve(n.params);
  });
  const errors = [];
  client.onerror = (e) => errors.push(e);
  const closed = signal();
  client.onclose = () => closed.resolve();
  await withTimeout(client.connect(transport), 10000, `connect over ${mode}`);
  const wire = instrumentTransport(transport);
  const pid = transport.pid ?? fixture?.pid;
  return {
    client,
    transport,
    fixture,
    wire,
    seen,
    waiters,
    errors,
    closed: closed.promise,
    pid,
    stderr: () => stderr + (fixture?.stderr() ?? ''),
    async close() {
      await client.close().catch(() => {});
      await fixture?.stop();
      if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
    },
  };
}

const call = (c, name, args = {}, options = {}) =>
  c.client.callTool({ name, arguments: args }, CallToolResultSchema, { timeout: 15000, ...options });
const textOf = (result) => {
  assert.equal(result.content.length, 1, JSON.stringify(result));
  assert.equal(result.content[0].type, 'text');
  return result.content[0].text;
};

for (const mode of ['stdio', 'http']) {
  describe(`faulty_server over ${mode}, driven by the SDK client`, SECOND_PASS, () => {
    let c;
    before(async () => {
      c = await connect(mode, ['--name', `faulty-${mode}`, '--downstream-calls', '7']);
    });
    after(() => c?.close());

    it('initializes with the name, the latest revision and the capabilities', async () => {
      assert.equal(c.client.getServerVersion().name, `faulty-${mode}`);
      const caps = c.client.getServerCapabilities();
      assert.deepEqual(caps.tools, { listChanged: true });
      assert.equal(caps.resources.subscribe, true);
      assert.ok(caps.prompts && caps.logging);
      const { tools } = await c.client.listTools();
      assert.deepEqual(tools.map((t) => t.name), TOOL_NAMES);
      for (const t of tools) {
        assert.ok(t.description.startsWith(`faulty-${mode}: `), t.description);
        assert.equal(t.inputSchema.type, 'object');
      }
      await c.client.ping();
    });

    it('echo answers the text with _meta.downstream_api_calls', async () => {
      const result = await call(c, 'echo', { text: `hello over ${mode}` });
      assert.equal(textOf(result), `hello over ${mode}`);
      assert.deepEqual(result._meta, { downstream_api_calls: 7 });
      assert.notEqual(result.isError, true);
    });

    it('slow sends its progress notifications spread over ms, then answers', async () => {
      const progress = [];
      const started = Date.now();
      const result = await call(c, 'slow', { ms: 400, steps: 4 }, { onprogress: (p) => progress.push(p) });
      const elapsed = Date.now() - started;
      assert.ok(elapsed >= 380, `answered after ${elapsed} ms`);
      assert.match(textOf(result), /done after 400 ms, 4 progress/);
      assert.deepEqual(progress.map((p) => [p.progress, p.total]), [[1, 4], [2, 4], [3, 4], [4, 4]]);
      const sent = c.wire.sent.find((m) => m.method === 'tools/call' && m.params.name === 'slow');
      const token = sent.params._meta.progressToken;
      const answerAt = c.wire.received.findIndex((m) => m.id === sent.id && 'result' in m);
      const notes = c.wire.received
        .map((m, i) => [m, i])
        .filter(([m]) => m.method === 'notifications/progress' && m.params.progressToken === token);
      assert.equal(notes.length, 4);
      for (const [, i] of notes) assert.ok(i < answerAt, 'progress precedes the answer');
    });

    it('slow without a progress token sends no progress', async () => {
      const before = c.wire.received.length;
      const result = await call(c, 'slow', { ms: 50, steps: 3 });
      assert.match(textOf(result), /0 progress/);
      assert.equal(c.wire.received.slice(before).filter((m) => m.method === 'notifications/progress').length, 0);
    });

    it('notifications/cancelled stops a slow call, which is never answered', async () => {
      const abort = new AbortController();
      const firstProgress = signal();
      const pending = call(c, 'slow', { ms: 1500, steps: 10 }, { signal: abort.signal, onprogress: () => firstProgress.resolve() });
      await withTimeout(firstProgress.promise, 5000, 'first progress');
      abort.abort('test cancels');
      await assert.rejects(pending);
      const sent = c.wire.sent.find((m) => m.method === 'tools/call' && m.params.name === 'slow' && m.params.arguments.ms === 1500);
      assert.ok(c.wire.sent.some((m) => m.method === 'notifications/cancelled' && m.params.requestId === sent.id), 'cancel sent');
      await sleep(1800); // past the call's end, had it gone on
      assert.equal(c.wire.received.filter((m) => m.id === sent.id && !('method' in m)).length, 0, 'never answered');
      const token = sent.params._meta.progressToken;
      const notes = c.wire.received.filter((m) => m.method === 'notifications/progress' && m.params.progressToken === token);
      assert.ok(notes.length >= 1 && notes.length <= 5, `progress stopped: ${notes.length} of 10 notifications`);
      await c.client.ping();
    });

    it('never does not answer (the client times out and cancels)', async () => {
      await assert.rejects(call(c, 'never', {}, { timeout: 300 }), (e) => e instanceof McpError && e.code === -32001);
      const sent = c.wire.sent.find((m) => m.method === 'tools/call' && m.params.name === 'never');
      await sleep(100);
      assert.equal(c.wire.received.filter((m) => m.id === sent.id && !('method' in m)).length, 0);
    });

    it('huge answers exactly that many bytes', async () => {
      const bytes = 3 * 1024 * 1024 + 17;
      const t = textOf(await call(c, 'huge', { bytes }));
      assert.equal(t.length, bytes);
      assert.match(t, /^x+$/);
    });

    it('fail answers JSON-RPC error -32603 "upstream failure"', async () => {
      await assert.rejects(call(c, 'fail'), (e) => {
        assert.ok(e instanceof McpError, String(e));
        assert.equal(e.code, -32603);
        assert.match(e.message, /upstream failure/);
        return true;
      });
      const sent = c.wire.sent.find((m) => m.method === 'tools/call' && m.params.name === 'fail');
      const answer = c.wire.received.find((m) => m.id === sent.id);
      assert.deepEqual(answer.error, { code: -32603, message: 'upstream failure' });
    });

    it('tool_error answers a result with isError', async () => {
      const result = await call(c, 'tool_error');
      assert.equal(result.isError, true);
      assert.match(textOf(result), /fails/);
    });

    it('an unknown tool is a -32602 error', async () => {
      await assert.rejects(call(c, 'no_such_tool'), (e) => e.code === -32602);
    });

    it('add_tool adds an echo tool and sends tools/list_changed', async () => {
      const name = `added_${mode}`;
      assert.equal(textOf(await call(c, 'add_tool', { name })), `added tool ${name}`);
      await withTimeout(c.waiters.listChanged.promise, 5000, 'notifications/tools/list_changed');
      assert.equal(c.seen.listChanged, 1);
      const { tools } = await c.client.listTools();
      assert.deepEqual(tools.map((t) => t.name), [...TOOL_NAMES, name]);
      const result = await call(c, name, { text: 'via the added tool' });
      assert.equal(textOf(result), 'via the added tool');
      assert.deepEqual(result._meta, { downstream_api_calls: 7 });
      const again = await call(c, 'add_tool', { name });
      assert.equal(again.isError, true);
    });

    it('ask_sampling sends sampling/createMessage and answers with the client result', async () => {
      const result = await call(c, 'ask_sampling', { prompt: 'two plus two' });
      assert.deepEqual(JSON.parse(textOf(result)), {
        model: 'test-model',
        role: 'assistant',
        content: { type: 'text', text: 'sampled<two plus two>' },
      });
      assert.equal(c.seen.sampling.length, 1);
      assert.deepEqual(c.seen.sampling[0].messages, [{ role: 'user', content: { type: 'text', text: 'two plus two' } }]);
      const asked = c.wire.received.find((m) => m.method === 'sampling/createMessage');
      assert.ok(asked && asked.id !== undefined, 'a server-to-client request');
      assert.ok(c.wire.sent.some((m) => m.id === asked.id && m.result), 'the client answered it');
    });

    it('ask_elicitation sends elicitation/create with a schema; a client error comes back as the text', async () => {
      const result = await call(c, 'ask_elicitation', { message: 'your answer?' });
      assert.deepEqual(JSON.parse(textOf(result)), { action: 'accept', content: { answer: 'forty-two' } });
      assert.equal(c.seen.elicitation[0].message, 'your answer?');
      assert.equal(c.seen.elicitation[0].requestedSchema.properties.answer.type, 'string');
      const refused = await call(c, 'ask_elicitation', { message: 'please refuse' });
      assert.equal(refused.isError, true);
      assert.match(textOf(refused), /no elicitation today/);
    });

    it('ask_roots sends roots/list and answers with the roots', async () => {
      const result = await call(c, 'ask_roots');
      assert.deepEqual(JSON.parse(textOf(result)), { roots: [{ uri: 'file:///work', name: 'work' }] });
    });

    it('log sends notifications/message, then answers; logging/setLevel filters', async () => {
      const result = await call(c, 'log', { level: 'warning', message: 'careful now' });
      assert.equal(textOf(result), 'logged at warning');
      const note = await withTimeout(c.waiters.log.promise, 5000, 'notifications/message');
      assert.deepEqual(note, { level: 'warning', logger: `faulty-${mode}`, data: 'careful now' });
      await c.client.setLoggingLevel('error');
      const quiet = await call(c, 'log', { level: 'info', message: 'not this one' });
      assert.match(textOf(quiet), /not logged/);
      await sleep(100);
      assert.deepEqual(c.seen.logs.map((l) => l.data), ['careful now']);
    });

    it('resources: list, templates, read, subscribe + touch -> updated', async () => {
      const { resources } = await c.client.listResources();
      assert.deepEqual(resources.map((r) => r.uri), ['faulty://static/hello']);
      const { resourceTemplates } = await c.client.listResourceTemplates();
      assert.deepEqual(resourceTemplates.map((r) => r.uriTemplate), ['faulty://item/{id}']);
      const hello = await c.client.readResource({ uri: 'faulty://static/hello' });
      assert.deepEqual(hello.contents, [{ uri: 'faulty://static/hello', mimeType: 'text/plain', text: 'hello' }]);
      const item = await c.client.readResource({ uri: 'faulty://item/42' });
      assert.equal(item.contents[0].text, 'item 42');
      await assert.rejects(c.client.readResource({ uri: 'faulty://nothing' }), (e) => e.code === -32002);

      assert.match(textOf(await call(c, 'touch', { uri: 'faulty://static/hello' })), /0 subscribed/);
      await c.client.subscribeResource({ uri: 'faulty://static/hello' });
      assert.match(textOf(await call(c, 'touch', { uri: 'faulty://static/hello' })), /1 subscribed/);
      assert.equal(await withTimeout(c.waiters.updated.promise, 5000, 'resources/updated'), 'faulty://static/hello');
      await c.client.unsubscribeResource({ uri: 'faulty://static/hello' });
      assert.match(textOf(await call(c, 'touch', { uri: 'faulty://static/hello' })), /0 subscribed/);
      await sleep(100);
      assert.deepEqual(c.seen.updated, ['faulty://static/hello']);
    });

    it('prompts: list and get greeting', async () => {
      const { prompts } = await c.client.listPrompts();
      assert.deepEqual(prompts.map((p) => p.name), ['greeting']);
      const got = await c.client.getPrompt({ name: 'greeting', arguments: { name: 'Ada' } });
      assert.deepEqual(got.messages, [{ role: 'user', content: { type: 'text', text: 'Hello, Ada!' } }]);
      await assert.rejects(c.client.getPrompt({ name: 'nope', arguments: {} }), (e) => e.code === -32602);
    });

    it('bad_json answers something that is not JSON, then nothing', async () => {
      await assert.rejects(call(c, 'bad_json', {}, { timeout: 1500 }));
      assert.ok(c.errors.some((e) => /JSON/i.test(String(e))), `a JSON parse error reported: ${c.errors.map(String)}`);
      await c.client.ping(); // the connection is still usable
    });

    it('crash makes the process exit before answering, ending the transport', async () => {
      const crashing = await connect(mode);
      try {
        await assert.rejects(call(crashing, 'crash'));
        if (mode === 'stdio') {
          await withTimeout(crashing.closed, 5000, 'the stdio transport closes');
        } else {
          assert.deepEqual(await withTimeout(crashing.fixture.exited, 5000, 'the http server exits'), { code: 3, signal: null });
          await assert.rejects(crashing.client.ping({ timeout: 3000 }));
        }
        assert.equal(crashing.wire.received.filter((m) => 'result' in m || 'error' in m).length, 0, 'nothing answered');
        assert.equal(alive(crashing.pid), false, 'the process is gone');
      } finally {
        await crashing.close();
      }
    });
  });
}

// ------------------------------------------------------------------ the wire, stdio

// The fixture as a raw child: send() writes a line, next(pred) waits for a parsed line.
function rawStdio(args = []) {
  const child = track(spawn(process.execPath, [FAULTY_SERVER, 'stdio', ...args], { stdio: ['pipe', 'pipe', 'pipe'] }));
  const lines = [];
  const waiting = [];
  let out = '';
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d) => {
    out += d;
    let nl;
    while ((nl = out.indexOf('\n')) >= 0) {
      lines.push({ raw: out.slice(0, nl), at: Date.now() });
      out = out.slice(nl + 1);
      for (const w of [...waiting]) w();
    }
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return {
    child,
    lines,
    exited,
    stderr: () => stderr,
    send: (m) => child.stdin.write(`${typeof m === 'string' ? m : JSON.stringify(m)}\n`),
    next(pred, ms = 5000) {
      return withTimeout(
        new Promise((resolve) => {
          const check = () => {
            const hit = lines.find((l) => {
              try {
                return pred(JSON.parse(l.raw), l);
              } catch {
                return false;
              }
            });
            if (hit) {
              waiting.splice(waiting.indexOf(check), 1);
              resolve(JSON.parse(hit.raw));
            }
          };
          waiting.push(check);
          check();
        }),
        ms,
        `a stdout line from faulty_server\n${lines.map((l) => l.raw).join('\n')}\n${stderr}`,
      );
    },
    kill: () => child.kill('SIGKILL'),
  };
}

const toolCall = (id, name, args = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

describe('faulty_server on the wire: stdio', SECOND_PASS, () => {
  it('answers the client revision when known, else 2025-06-18', async () => {
    for (const v of [...PROTOCOL_VERSIONS, '2030-01-01']) {
      const s = rawStdio();
      try {
        s.send(INIT(v));
        const r = await s.next((m) => m.id === 1);
        assert.equal(r.result.protocolVersion, v === '2030-01-01' ? '2025-06-18' : v);
        assert.equal(r.result.serverInfo.name, 'faulty');
      } finally {
        s.kill();
      }
    }
  });

  it('bad_json writes a line that is not JSON, then nothing for that request', async () => {
    const s = rawStdio();
    try {
      s.send(INIT());
      await s.next((m) => m.id === 1);
      s.send(toolCall(2, 'bad_json'));
      s.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
      await s.next((m) => m.id === 3);
      await sleep(200);
      assert.equal(s.lines.length, 3, s.lines.map((l) => l.raw).join('\n'));
      assert.throws(() => JSON.parse(s.lines[1].raw));
      assert.match(s.lines[1].raw, /"id":2/);
      assert.equal(s.child.exitCode, null);
    } finally {
      s.kill();
    }
  });

  it('a line that is not JSON is answered with a parse error', async () => {
    const s = rawStdio();
    try {
      s.send('this is {not json');
      const r = await s.next((m) => m.error?.code === -32700);
      assert.equal(r.id, null);
    } finally {
      s.kill();
    }
  });

  it('crash exits with status 3 before answering', async () => {
    const s = rawStdio();
    try {
      s.send(INIT());
      await s.next((m) => m.id === 1);
      s.send(toolCall(2, 'crash'));
      assert.deepEqual(await withTimeout(s.exited, 5000, 'exit'), { code: 3, signal: null });
      assert.equal(s.lines.length, 1);
    } finally {
      s.kill();
    }
  });

  it('--die-after 2 answers two tools/call requests, then exits with status 1', async () => {
    const s = rawStdio(['--die-after', '2']);
    try {
      s.send(INIT());
      await s.next((m) => m.id === 1);
      s.send(toolCall(2, 'echo', { text: 'one' }));
      await s.next((m) => m.id === 2);
      await sleep(100);
      assert.equal(s.child.exitCode, null, 'alive after the first call');
      s.send({ jsonrpc: '2.0', id: 3, method: 'ping' }); // not a tools/call: not counted
      await s.next((m) => m.id === 3);
      s.send(toolCall(4, 'echo', { text: 'two' }));
      const second = await s.next((m) => m.id === 4);
      assert.equal(second.result.content[0].text, 'two');
      assert.deepEqual(await withTimeout(s.exited, 5000, 'exit'), { code: 1, signal: null });
    } finally {
      s.kill();
    }
  });

  it('--tools lists and serves only those tools; --name prefixes descriptions', async () => {
    const s = rawStdio(['--tools', 'echo,fail', '--name', 'alpha']);
    try {
      s.send(INIT());
      const init = await s.next((m) => m.id === 1);
      assert.equal(init.result.serverInfo.name, 'alpha');
      s.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      const list = await s.next((m) => m.id === 2);
      assert.deepEqual(list.result.tools.map((t) => t.name), ['echo', 'fail']);
      assert.ok(list.result.tools.every((t) => t.description.startsWith('alpha: ')));
      s.send(toolCall(3, 'slow', { ms: 1 }));
      assert.equal((await s.next((m) => m.id === 3)).error.code, -32602);
      s.send(toolCall(4, 'echo', { text: 'x' }));
      const echo = await s.next((m) => m.id === 4);
      assert.equal(echo.result._meta, undefined, 'no _meta without --downstream-calls');
    } finally {
      s.kill();
    }
  });

  it('--startup-delay-ms, --pid-file and --stderr-noise', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'faulty-'));
    const pidFile = path.join(dir, 'pid');
    const started = Date.now();
    const s = rawStdio(['--startup-delay-ms', '500', '--pid-file', pidFile, '--stderr-noise']);
    try {
      s.send(INIT());
      await s.next((m) => m.id === 1);
      assert.ok(Date.now() - started >= 480, `answered after ${Date.now() - started} ms`);
      assert.equal(readFileSync(pidFile, 'utf8').trim(), String(s.child.pid));
      s.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
      s.send(toolCall(3, 'echo', { text: 'x' }));
      await s.next((m) => m.id === 3);
      await sleep(100);
      const noise = s.stderr().trim().split('\n');
      assert.equal(noise.length, 3, s.stderr());
      assert.match(noise[2], /tools\/call id=3/);
    } finally {
      s.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('without --stderr-noise it writes nothing to stderr', async () => {
    const s = rawStdio();
    try {
      s.send(INIT());
      await s.next((m) => m.id === 1);
      await sleep(100);
      assert.equal(s.stderr(), '');
    } finally {
      s.kill();
    }
  });
});

// ------------------------------------------------------------------ the wire, HTTP

const baseOf = (fixture) => ({ base: fixture.url.replace(/\/mcp$/, '') });

async function httpSession(fixture, version = '2025-11-25') {
  const res = await post(baseOf(fixture), INIT(version));
  assert.equal(res.status, 200, res.text);
  const sessionId = res.headers.get('mcp-session-id');
  assert.ok(sessionId);
  const ack = await post(baseOf(fixture), { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId });
  assert.equal(ack.status, 202);
  return { sessionId, init: res };
}

// Opens GET /mcp and collects its SSE messages until stop().
async function openGetStream(fixture, sessionId) {
  const abort = new AbortController();
  const res = await fetch(fixture.url, { headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sessionId }, signal: abort.signal });
  const messages = [];
  let text = '';
  const reading = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body) {
        text += decoder.decode(chunk, { stream: true });
        messages.splice(0, messages.length, ...parseSse(text).map((e) => JSON.parse(e.data)));
      }
    } catch {
      /* aborted */
    }
  })();
  return {
    res,
    messages,
    async until(pred, ms = 5000) {
      const deadline = Date.now() + ms;
      while (!messages.some(pred)) {
        if (Date.now() > deadline) throw new Error(`not on the GET stream: ${JSON.stringify(messages)}`);
        await sleep(20);
      }
    },
    ended: reading,
    stop: () => abort.abort(),
  };
}

describe('faulty_server on the wire: http', SECOND_PASS, () => {
  let f;
  before(async () => {
    f = await startFaultyHttp();
    track(f.child);
  });
  after(() => f?.stop());

  it('prints the listening line and negotiates revisions per session', async () => {
    assert.match(f.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    for (const v of [...PROTOCOL_VERSIONS, '1999-01-01']) {
      const { init } = await httpSession(f, v);
      assert.equal(init.headers.get('content-type'), 'application/json');
      assert.equal(init.json.result.protocolVersion, v === '1999-01-01' ? '2025-06-18' : v);
    }
  });

  it('requires Mcp-Session-Id after initialize: 400 without, 404 unknown, 404 after DELETE', async () => {
    const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };
    assert.equal((await post(baseOf(f), ping)).status, 400);
    assert.equal((await post(baseOf(f), ping, { sessionId: 'no-such-session' })).status, 404);
    const { sessionId } = await httpSession(f);
    const pong = await post(baseOf(f), ping, { sessionId });
    assert.deepEqual(pong.json, { jsonrpc: '2.0', id: 2, result: {} });
    const del = await request(baseOf(f), 'DELETE', { headers: { 'Mcp-Session-Id': sessionId } });
    assert.equal(del.status, 200);
    assert.equal((await post(baseOf(f), ping, { sessionId })).status, 404);
    assert.equal((await request(baseOf(f), 'DELETE', { headers: { 'Mcp-Session-Id': sessionId } })).status, 404);
    assert.equal((await request(baseOf(f), 'GET', { headers: { 'Mcp-Session-Id': sessionId, Accept: 'text/event-stream' } })).status, 404);
  });

  it('answers JSON by default and SSE for a tools/call with a progress token', async () => {
    const { sessionId } = await httpSession(f);
    const plain = await post(baseOf(f), toolCall(3, 'slow', { ms: 10 }), { sessionId });
    assert.equal(plain.headers.get('content-type'), 'application/json');
    const streamed = await post(
      baseOf(f),
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'slow', arguments: { ms: 60, steps: 2 }, _meta: { progressToken: 'p' } } },
      { sessionId },
    );
    assert.equal(streamed.headers.get('content-type'), 'text/event-stream');
    assert.deepEqual(streamed.messages.map((m) => m.method ?? m.id), ['notifications/progress', 'notifications/progress', 4]);
  });

  it('the GET stream carries list_changed (queued until it opens) and a DELETE ends it', async () => {
    const { sessionId } = await httpSession(f);
    const added = await post(baseOf(f), toolCall(5, 'add_tool', { name: `wire_added_${Date.now()}` }), { sessionId });
    assert.match(added.json.result.content[0].text, /added tool/);
    const stream = await openGetStream(f, sessionId);
    try {
      assert.equal(stream.res.headers.get('content-type'), 'text/event-stream');
      await stream.until((m) => m.method === 'notifications/tools/list_changed');
      const second = await request(baseOf(f), 'GET', { headers: { 'Mcp-Session-Id': sessionId, Accept: 'text/event-stream' } });
      assert.equal(second.status, 409, 'one GET stream per session');
      await request(baseOf(f), 'DELETE', { headers: { 'Mcp-Session-Id': sessionId } });
      await withTimeout(stream.ended, 3000, 'the GET stream ends with the session');
    } finally {
      stream.stop();
    }
  });

  it('bad_json answers a 200 body that is not JSON', async () => {
    const { sessionId } = await httpSession(f);
    const res = await fetch(f.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': sessionId },
      body: JSON.stringify(toolCall(6, 'bad_json')),
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    const body = await res.text();
    assert.throws(() => JSON.parse(body));
    assert.match(body, /"id":6/);
  });

  it('a body that is not JSON is a 400 parse error; other paths 404; PUT 405', async () => {
    const res = await post(baseOf(f), '{nope');
    assert.equal(res.status, 400);
    assert.equal(res.json.error.code, -32700);
    assert.equal((await request(baseOf(f), 'GET', { path: '/other' })).status, 404);
    assert.equal((await request(baseOf(f), 'PUT')).status, 405);
  });

  it('--sse answers every request as an event stream', async () => {
    const g = await startFaultyHttp(['--sse']);
    track(g.child);
    try {
      const res = await post(baseOf(g), INIT());
      assert.equal(res.headers.get('content-type'), 'text/event-stream');
      assert.ok(res.headers.get('mcp-session-id'));
      assert.equal(res.messages[0].result.serverInfo.name, 'faulty');
      const sessionId = res.headers.get('mcp-session-id');
      const bad = await fetch(g.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': sessionId },
        body: JSON.stringify(toolCall(2, 'bad_json')),
      });
      assert.equal(bad.headers.get('content-type'), 'text/event-stream');
      assert.match(await bad.text(), /^event: message\ndata: \{"jsonrpc":"2.0","id":2,.*cut off here\n\n$/);
    } finally {
      await g.stop();
    }
  });

  it('crash makes the process exit with status 3; --die-after 1 exits with 1 after answering', async () => {
    const g = await startFaultyHttp();
    track(g.child);
    try {
      const { sessionId } = await httpSession(g);
      await assert.rejects(post(baseOf(g), toolCall(2, 'crash'), { sessionId }));
      assert.deepEqual(await withTimeout(g.exited, 5000, 'exit'), { code: 3, signal: null });
    } finally {
      await g.stop();
    }

    const h = await startFaultyHttp(['--die-after', '1']);
    track(h.child);
    try {
      const s = await httpSession(h);
      const answered = await post(baseOf(h), toolCall(2, 'echo', { text: 'last words' }), { sessionId: s.sessionId });
      assert.equal(answered.json.result.content[0].text, 'last words');
      assert.deepEqual(await withTimeout(h.exited, 5000, 'exit'), { code: 1, signal: null });
    } finally {
      await h.stop();
    }
  });

  it('--startup-delay-ms delays listening; --pid-file and --stderr-noise', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'faulty-'));
    const pidFile = path.join(dir, 'pid');
    const started = Date.now();
    const g = await startFaultyHttp(['--startup-delay-ms', '500', '--pid-file', pidFile, '--stderr-noise', '--name', 'noisy']);
    track(g.child);
    try {
      assert.ok(Date.now() - started >= 480, `listening after ${Date.now() - started} ms`);
      assert.equal(readFileSync(pidFile, 'utf8').trim(), String(g.pid));
      const { sessionId } = await httpSession(g);
      await post(baseOf(g), { jsonrpc: '2.0', id: 2, method: 'ping' }, { sessionId });
      await sleep(100);
      assert.match(g.stderr(), /\[noisy pid \d+\] request initialize id=1/);
      assert.match(g.stderr(), /request ping id=2/);
    } finally {
      await g.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
