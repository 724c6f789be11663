// Shared helpers for the integration tests: start the real toolport binary, talk raw
// HTTP / TCP to it, and make sure every process started here is killed again.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import net from 'node:net';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';

const TEST_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// The binary under test: $TOOLPORT_BIN, or ../../build/toolport relative to tests/integration.
export const TOOLPORT_BIN = process.env.TOOLPORT_BIN
  ? path.resolve(process.env.TOOLPORT_BIN)
  : path.resolve(TEST_DIR, '../../build/toolport');

if (!existsSync(TOOLPORT_BIN)) {
  throw new Error(`toolport binary not found at ${TOOLPORT_BIN} (build it, or set TOOLPORT_BIN)`);
}

export const LATEST = '2025-11-25';
export const INIT_PARAMS = (protocolVersion = LATEST) => ({
  protocolVersion,
  capabilities: {},
  clientInfo: { name: 'toolport-integration-tests', version: '1.0.0' },
});

// Every child started here, so that a test run that dies half-way still kills them.
const children = new Set();
process.on('exit', () => {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
});

// The records of a JSON Lines file (an audit log), [] while it does not exist.
export function readJsonLines(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

export function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

// Runs a command-line program to its end without blocking this process's event loop (a
// fixture may live in it); resolves with its exit status, signal and all of its output
// (read to the end: 'close', not 'exit').
export function runCommand(command, args, { env = {}, timeoutMs = 60000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
  });
}

// The toolport CLI (`toolport test`, `toolport call`, …), as runCommand.
export const runToolport = (args, options = {}) => runCommand(TOOLPORT_BIN, args, options);

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Polls `predicate` (sync or async) every 50 ms until it returns something truthy, which is
// returned; fails naming `what` after `timeoutMs`.
export async function waitFor(what, predicate, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

export function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// A port that was free a moment ago: bind port 0, read it, close.
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// Whether process `pid` holds a socket listening on TCP `port` (Linux: the listening
// sockets' inodes in /proc/net/tcp{,6}, matched against the process's descriptors).
export function listensOn(pid, port) {
  const inodes = new Set();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is HEXADDR:HEXPORT; st 0A is LISTEN; the inode is the tenth field.
      if (fields.length > 9 && fields[1].endsWith(`:${hexPort}`) && fields[3] === '0A') inodes.add(fields[9]);
    }
  }
  if (inodes.size === 0) return false;
  let fds = [];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const match = /^socket:\[(\d+)\]$/.exec(target);
      if (match && inodes.has(match[1])) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}

function canConnect(port) {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host: '127.0.0.1' });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

// What AddressSanitizer, LeakSanitizer, ThreadSanitizer and UBSan print when they find something.
export const SANITIZER_REPORT = /ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error: /;

// Keeps the tail of a child's stderr for failure messages (logs()), and its first sanitizer
// report whole (logs.report(), '' when none): the tail may have lost the report's start.
function captureStderr(child) {
  let text = '';
  let report = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk) => {
    const from = Math.max(0, text.length - 200);
    text += chunk;
    if (report) {
      if (report.length < 100000) report += chunk;
    } else {
      const found = SANITIZER_REPORT.exec(text.slice(from));
      if (found) report = text.slice(text.lastIndexOf('\n', from + found.index) + 1);
    }
    if (text.length > 20000) text = text.slice(-20000);
  });
  const logs = () => text;
  logs.report = () => report;
  return logs;
}

// The last `count` lines of `text`.
const lastLines = (text, count) => text.split('\n').slice(-count - 1).join('\n');

// A server that exits while no test stopped it (a crash, an abort, std::terminate, a signal
// from outside such as the OOM killer's) says so on this process's stderr, which the test
// runner prints: its exit status and the end of its log, where the cause is. A test's own
// kill is no surprise (SIGHUP only reloads), unless the server then exits with a failure (it
// was dying already, or a sanitizer reports at exit).
function reportUnexpectedExit(child, what, logs) {
  let deliberate = false;
  const kill = child.kill.bind(child);
  child.kill = (signal) => {
    if (signal !== 'SIGHUP') deliberate = true;
    return kill(signal);
  };
  child.once('exit', (code, signal) => {
    if (deliberate && !code) return;
    let reported = false;
    const report = () => {
      if (reported) return;
      reported = true;
      console.error(
        `toolport ${what} (pid ${child.pid}) ${deliberate ? 'failed as it was stopped' : 'exited unexpectedly'}: ` +
          `exit code ${code}, signal ${signal}; ` +
          (logs.report()
            ? `its sanitizer report:\n${logs.report()}\n(end of the report)`
            : `the end of its stderr:\n${lastLines(logs(), 60)}\n(end of toolport's stderr)`),
      );
    };
    // 'close' comes once its stderr is read to the end; something it started may hold that open.
    child.once('close', report);
    setTimeout(report, 1000).unref();
  });
}

async function stopChild(child, graceMs = 3000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  // 'close' comes after the child's stderr has been read to its end (a sanitizer's report
  // at exit included), 'exit' may come before.
  const exited = new Promise((resolve) => child.once('close', resolve));
  child.kill('SIGTERM');
  let timer;
  const done = await Promise.race([
    exited.then(() => true),
    new Promise((resolve) => {
      timer = setTimeout(() => resolve(false), graceMs);
    }),
  ]);
  clearTimeout(timer);
  if (!done) {
    child.kill('SIGKILL');
    await exited;
  }
}

// Starts `toolport serve --listen 127.0.0.1:PORT --packs conformance` (plus a config file
// when `config` YAML text is given) and waits until the port accepts connections. `packs`
// replaces the pack list; `port` asks for a given port (e.g. to restart on the same one).
// `wrapper` is a command that runs the binary (e.g. ['prlimit', '--nofile=64:64', '--']); it
// must exec it, so that the child's pid is the server's.
export async function startHttpServer({ config = null, env = {}, extraArgs = [], packs = 'conformance', port: fixedPort = 0, wrapper = [] } = {}) {
  let tmpDir = null;
  const args = [];
  // TOOLPORT_TEST_IO_THREADS=N runs every HTTP server with N I/O threads (tests/run_suites.sh
  // runs the HTTP suites once more that way), unless the test sets its own.
  if (process.env.TOOLPORT_TEST_IO_THREADS && !extraArgs.includes('--io-threads')) {
    args.push('--io-threads', process.env.TOOLPORT_TEST_IO_THREADS);
  }
  if (config !== null) {
    tmpDir = mkdtempSync(path.join(os.tmpdir(), 'toolport-it-'));
    const file = path.join(tmpDir, 'toolport.yaml');
    writeFileSync(file, config);
    args.push('--config', file);
  }
  let lastError = null;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = fixedPort || (await freePort());
    const command = [...wrapper, TOOLPORT_BIN, 'serve', '--listen', `127.0.0.1:${port}`, '--packs', packs, ...args, ...extraArgs];
    // Each server keeps its state (tool pins, on by default) in a directory of its own: two
    // tests' servers with a source of the same name would otherwise see each other's pins as
    // changes. A test that restarts a server on the same state passes XDG_STATE_HOME itself.
    const stateHome = mkdtempSync(path.join(process.env.XDG_STATE_HOME ?? os.tmpdir(), 'server-state-'));
    const child = track(
      spawn(command[0], command.slice(1), {
        env: { ...process.env, XDG_STATE_HOME: stateHome, ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      }),
    );
    const logs = captureStderr(child);
    let exitInfo = null;
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
    });
    const started = Date.now();
    const deadline = started + 10000;
    let up = false;
    while (Date.now() < deadline && exitInfo === null) {
      // The port answering is not enough: test files run in parallel, and another file's
      // server may have taken the port freePort gave (ours then fails to listen, and the test
      // would talk to that one until that one stops). Ours says so in its log; with a quiet
      // log level, the kernel says whether the listening socket is the child's own.
      if (await canConnect(port) && (logs().includes(`serving MCP on http://127.0.0.1:${port}/`) || listensOn(child.pid, port))) {
        up = true;
        break;
      }
      await sleep(25);
    }
    if (up && exitInfo === null) {
      const base = `http://127.0.0.1:${port}`;
      reportUnexpectedExit(child, `serving ${base}`, logs);
      return {
        port,
        base,
        url: `${base}/mcp`,
        child,
        logs,
        exited: () => exitInfo,
        async stop() {
          await stopChild(child);
          if (tmpDir) rmSync(tmpDir, { recursive: true, force: true });
          // A sanitizer build reports memory errors and leaks on stderr (some only at exit).
          // Found in every chunk as it came: a long report's first line may be gone from the tail.
          assert.ok(!logs.report(), `sanitizer report from toolport:\n${logs.report()}`);
        },
      };
    }
    await stopChild(child);
    lastError = new Error(
      `toolport did not start listening on port ${port} (exit: ${JSON.stringify(exitInfo)})\n${logs()}`,
    );
    if (!/cannot listen/.test(logs())) break; // only retry a lost port race
  }
  if (tmpDir) rmSync(tmpDir, { recursive: true, force: true });
  throw lastError;
}

// Starts an HTTP server for one test and kills it when that test ends.
export async function serverForTest(t, options) {
  const server = await startHttpServer(options);
  t.after(() => server.stop());
  return server;
}

export function assertAlive(server) {
  assert.equal(server.exited(), null, `toolport exited: ${JSON.stringify(server.exited())}\n${server.logs()}`);
}

// ------------------------------------------------------------------ raw HTTP

export function parseSse(text) {
  const events = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = [];
    let event = 'message';
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      else if (line.startsWith('event:')) event = line.slice(6).trim();
    }
    if (data.length && data.join('\n').trim() !== '') events.push({ event, data: data.join('\n') });
  }
  return events;
}

// POSTs to /mcp (or `path`) with fetch. `body` may be an object (JSON-encoded), a string or
// a Buffer. Returns status, headers, raw text, and the JSON-RPC messages found in the body
// (a JSON body, or the `message` events of an SSE body).
export async function post(server, body, { sessionId, protocolVersion, headers = {}, path: p = '/mcp', timeoutMs = 10000 } = {}) {
  const h = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    ...headers,
  };
  if (sessionId) h['Mcp-Session-Id'] = sessionId;
  if (protocolVersion) h['MCP-Protocol-Version'] = protocolVersion;
  const payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const res = await fetch(server.base + p, {
    method: 'POST',
    headers: h,
    body: payload,
    signal: AbortSignal.timeout(timeoutMs),
  });
  return readResponse(res);
}

export async function request(server, method, { headers = {}, path: p = '/mcp', timeoutMs = 10000 } = {}) {
  const res = await fetch(server.base + p, { method, headers, signal: AbortSignal.timeout(timeoutMs) });
  return readResponse(res);
}

// Opens a legacy HTTP+SSE stream (GET /sse) and reads it up to its `endpoint` event; resolves
// with its status, the endpoint (null when the status is not 200) and close(). Fails when the
// stream ends or `timeoutMs` passes before the endpoint is named.
export async function openLegacySse(server, { headers = {}, timeoutMs = 10000 } = {}) {
  const abort = new AbortController();
  const close = () => abort.abort();
  const res = await fetch(`${server.base}/sse`, { headers: { ...headers, Accept: 'text/event-stream' }, signal: abort.signal });
  if (res.status !== 200) {
    close();
    return { status: res.status, endpoint: null, close };
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const readEndpoint = async () => {
    let text = '';
    for (;;) {
      const found = /event: endpoint\r?\ndata: (.*)\r?\n/.exec(text);
      if (found) return found[1];
      const { value, done } = await reader.read();
      if (done) throw new Error(`the SSE stream ended before naming its endpoint: ${text}`);
      text += decoder.decode(value, { stream: true });
    }
  };
  try {
    return { status: res.status, endpoint: await withTimeout(readEndpoint(), timeoutMs, 'the SSE endpoint event'), close };
  } catch (error) {
    close();
    throw error;
  }
}

async function readResponse(res) {
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  let json;
  let messages = [];
  if (type.startsWith('application/json') && text.length) {
    json = JSON.parse(text);
    messages = Array.isArray(json) ? json : [json];
  } else if (type.startsWith('text/event-stream')) {
    messages = parseSse(text)
      .filter((e) => e.event === 'message')
      .map((e) => JSON.parse(e.data));
  }
  return { status: res.status, headers: res.headers, text, json, messages };
}

// Asserts a JSON-RPC error body: the code, and the id (null unless given).
export function assertRpcError(res, code, { id = null, message } = {}) {
  const type = typeof res.headers?.get === 'function' ? res.headers.get('content-type') : res.headers?.['content-type'];
  assert.ok(res.json, `expected a JSON body, got ${type}: ${res.text.slice(0, 300)}`);
  assert.equal(res.json.jsonrpc, '2.0', res.text);
  assert.ok(res.json.error, `expected a JSON-RPC error, got ${res.text.slice(0, 300)}`);
  assert.equal(res.json.error.code, code, res.text);
  assert.equal(typeof res.json.error.message, 'string');
  assert.deepEqual(res.json.id, id, res.text);
  if (message) assert.match(res.json.error.message, message);
}

// initialize + notifications/initialized over raw HTTP; returns the session id.
export async function initializeSession(server, protocolVersion = LATEST, headers = {}) {
  const res = await post(server, { jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT_PARAMS(protocolVersion) }, { headers });
  assert.equal(res.status, 200, `initialize: ${res.status} ${res.text}`);
  const sessionId = res.headers.get('mcp-session-id');
  assert.ok(sessionId, 'initialize must return an Mcp-Session-Id header');
  const reply = res.messages.find((m) => m.id === 1);
  assert.ok(reply?.result, `initialize result: ${res.text}`);
  assert.equal(reply.result.protocolVersion, protocolVersion);
  const ack = await post(server, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId, protocolVersion, headers });
  assert.equal(ack.status, 202, `notifications/initialized: ${ack.status} ${ack.text}`);
  return { sessionId, protocolVersion, result: reply.result };
}

// The server is still up and serves a fresh session: initialize, then ping.
export async function assertHealthy(server) {
  assertAlive(server);
  const { sessionId } = await initializeSession(server);
  const pong = await post(server, { jsonrpc: '2.0', id: 99, method: 'ping' }, { sessionId, protocolVersion: LATEST });
  assert.equal(pong.status, 200, pong.text);
  assert.deepEqual(pong.messages, [{ jsonrpc: '2.0', id: 99, result: {} }]);
  assertAlive(server);
}

// ------------------------------------------------------------------ raw TCP

// One raw HTTP exchange on a fresh socket. `write(sock)` writes the request (and may end
// it). Resolves with whatever came back when the server closes the connection, a complete
// response has arrived (Content-Length), or `timeoutMs` passes (`timedOut: true`).
export function rawExchange(port, write, { timeoutMs = 5000 } = {}) {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host: '127.0.0.1' });
    const chunks = [];
    let error = null;
    let settled = false;
    const finish = (extra) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      const raw = Buffer.concat(chunks).toString('latin1');
      resolve({ raw, ...parseRawResponse(raw), error, ...extra });
    };
    const timer = setTimeout(() => finish({ timedOut: true }), timeoutMs);
    sock.on('data', (d) => {
      chunks.push(d);
      const parsed = parseRawResponse(Buffer.concat(chunks).toString('latin1'));
      if (parsed.complete) finish({ timedOut: false, closed: false });
    });
    sock.on('error', (e) => {
      error = e;
    });
    sock.on('close', () => finish({ timedOut: false, closed: true }));
    sock.on('connect', () => Promise.resolve(write(sock)).catch((e) => (error ??= e)));
  });
}

export function parseRawResponse(raw) {
  const end = raw.indexOf('\r\n\r\n');
  if (!raw.startsWith('HTTP/') || end < 0) return { status: null, headers: {}, body: '', complete: false };
  const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
  const status = Number(statusLine.split(' ')[1]);
  const headers = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const body = raw.slice(end + 4);
  const length = headers['content-length'] !== undefined ? Number(headers['content-length']) : null;
  const complete = length !== null && Buffer.byteLength(body, 'latin1') >= length;
  return { status, headers, body, complete };
}

// A request through node:http, which (unlike fetch) lets a test set the Host header.
export function httpRequest(port, { method = 'POST', path: p = '/mcp', headers = {}, body = '' } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: p, headers, agent: false, timeout: 10000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        let json;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode, headers: res.headers, text, json });
      });
    });
    req.on('timeout', () => req.destroy(new Error('http request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

// ------------------------------------------------------------------ SDK helpers

// Call after client.connect(transport). Records every message the client sends and
// receives (on the wire, before the SDK's own handling), and works around a client-side
// race in @modelcontextprotocol/sdk (typescript-sdk issue #2580): the SDK dispatches
// notifications one microtask late but handles responses at once, so a progress
// notification that arrives in the same read as its response is dropped as "unknown
// token". Handing responses to the SDK one microtask later keeps the wire order.
export function instrumentTransport(transport) {
  const sent = [];
  const received = [];
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    sent.push(message);
    return send(message, options);
  };
  const onmessage = transport.onmessage;
  transport.onmessage = (message, extra) => {
    received.push(message);
    const isResponse = !('method' in message) && ('result' in message || 'error' in message);
    if (isResponse) queueMicrotask(() => onmessage(message, extra));
    else onmessage(message, extra);
  };
  return { sent, received };
}

// Checks that the three progress notifications of test_tool_with_progress went out on the
// wire, with the client's token, before the response; returns that token.
export function assertProgressOnWire(wire, { progress, result }) {
  const call = wire.sent.find((m) => m.method === 'tools/call' && m.params?.name === 'test_tool_with_progress');
  assert.ok(call, 'the tools/call request was sent');
  const token = call.params._meta?.progressToken;
  assert.notEqual(token, undefined, 'the SDK sets a progress token when onprogress is given');
  const responseAt = wire.received.findIndex((m) => m.id === call.id && !('method' in m));
  assert.ok(responseAt >= 0, 'response received');
  const notes = wire.received
    .map((m, i) => ({ m, i }))
    .filter(({ m }) => m.method === 'notifications/progress' && m.params.progressToken === token);
  assert.equal(notes.length, 3, `progress notifications on the wire: ${JSON.stringify(notes.map((n) => n.m))}`);
  for (const { i } of notes) assert.ok(i < responseAt, 'every progress notification precedes the response');
  assert.equal(progress.length, 3, `onprogress calls: ${JSON.stringify(progress)}`);
  assert.deepEqual(
    progress.map((p) => p.progress),
    [0, 50, 100],
  );
  for (const p of progress) assert.equal(p.total, 100);
  assert.equal(result.content.length, 1);
  assert.equal(result.content[0].type, 'text');
  assert.equal(result.content[0].text, String(token));
  return token;
}

// ------------------------------------------------------------------ Redis

// A real redis-server on loopback (no persistence), for the scale-out tests.
export const REDIS = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => existsSync(p));

export async function startRedis(port, dir) {
  const child = track(
    spawn(REDIS, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
      stdio: ['ignore', 'ignore', 'pipe'],
    }),
  );
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const r = spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' });
    if (r.stdout?.trim() === 'PONG') return child;
    await sleep(25);
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server did not start on ${port}`);
}

export async function stopRedis(child) {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}
