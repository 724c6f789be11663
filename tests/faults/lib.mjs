// Helpers for the fault campaign: start the real binary (through the integration
// harness), measure it from /proc (descriptors, RSS, CPU), talk HTTP to it without
// keep-alive pools (so that every server-side socket left open is the server's doing), and
// check after each fault that it is back to where it started and still serving.
import { readdirSync, readFileSync, readlinkSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import assert from 'node:assert/strict';
import { startHttpServer, assertAlive, SANITIZER_REPORT, sleep, withTimeout } from '../integration/lib/harness.mjs';

export { sleep, withTimeout, SANITIZER_REPORT };

export const REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'];
export const LATEST = '2025-11-25';
export const STATELESS = '2026-07-28';
export const CLIENT_INFO = { name: 'toolport-faults', version: '1.0.0' };
export const ACCEPT_BOTH = 'application/json, text/event-stream';

// Tunables (environment), for slower machines or sanitizer builds:
//   TOOLPORT_FAULTS_SLOW          multiplies every time bound (default 1, or 3 under a sanitizer)
//   TOOLPORT_FAULTS_RSS_SLACK_MB  allowed RSS growth over the baseline (default 64, or 384 under a sanitizer)
//   TOOLPORT_FAULTS_IDLE_CPU      allowed CPU share while idle (default 0.05)
const envNumber = (name) => (process.env[name] !== undefined && process.env[name] !== '' ? Number(process.env[name]) : undefined);

// ------------------------------------------------------------------ /proc

let clockTicks = null;
function ticksPerSecond() {
  if (clockTicks === null) {
    const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    clockTicks = Number(r.stdout?.trim()) || 100;
  }
  return clockTicks;
}

// The /proc readers take a pid or a server; for a server that has exited they fail with
// its exit status and log (a crash under a fault), not with ENOENT.
function proc(target, read) {
  const pid = typeof target === 'number' ? target : target.pid;
  try {
    return read(pid);
  } catch (e) {
    if (typeof target !== 'number' && e.code === 'ENOENT') {
      assertAlive(target);
      assert.fail(`toolport (pid ${pid}) is gone:\n${target.logs()}`);
    }
    throw e;
  }
}

export function fdCount(target) {
  return proc(target, (pid) => readdirSync(`/proc/${pid}/fd`).length);
}

// fd -> what it points at (socket:[inode], anon_inode:[eventpoll], ...), for failure messages.
export function fdTargets(target) {
  const pid = typeof target === 'number' ? target : target.pid;
  const out = {};
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      out[fd] = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      out[fd] = '?';
    }
  }
  return out;
}

export function procStatus(target) {
  const text = proc(target, (pid) => readFileSync(`/proc/${pid}/status`, 'utf8'));
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  return { rssKb: kb('VmRSS'), vmSizeKb: kb('VmSize'), threads: Number(/^Threads:\s+(\d+)/m.exec(text)?.[1] ?? NaN) };
}

// utime + stime of every thread of the process, in milliseconds.
export function cpuMs(target) {
  const text = proc(target, (pid) => readFileSync(`/proc/${pid}/stat`, 'utf8'));
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond();
}

// CPU used over `ms` of wall time, as a share of one core.
export async function cpuShare(target, ms) {
  const c0 = cpuMs(target);
  const t0 = performance.now();
  await sleep(ms);
  const c1 = cpuMs(target);
  const wall = performance.now() - t0;
  return { share: (c1 - c0) / wall, cpuMs: c1 - c0, wallMs: wall };
}

const HAVE_SS = spawnSync('ss', ['-V'], { encoding: 'utf8' }).status === 0;

// Server-side sockets of `port` in CLOSE-WAIT (the client left, the server never closed),
// or null without ss.
export function closeWaitSockets(port) {
  if (!HAVE_SS) return null;
  const r = spawnSync('ss', ['-Htan', 'state', 'close-wait', `( sport = :${port} )`], { encoding: 'utf8' });
  if (r.status !== 0) return null;
  return r.stdout.split('\n').filter((l) => l.trim() !== '');
}

// ------------------------------------------------------------------ the server

// Counts the server's stderr lines as they come (the harness keeps only a tail): all of
// them, those about accept(), sanitizer reports; keeps the last lines for messages.
function watchLog(child) {
  const state = { lines: 0, acceptLines: 0, sanitizer: null, recent: [], partial: '' };
  const KEEP = 4000;
  child.stderr.on('data', (chunk) => {
    const text = state.partial + chunk;
    const parts = text.split('\n');
    state.partial = parts.pop();
    if (state.partial.length > 65536) state.partial = state.partial.slice(-65536);
    for (const line of parts) {
      state.lines++;
      if (/accept/i.test(line)) state.acceptLines++;
      if (state.sanitizer === null && SANITIZER_REPORT.test(line)) state.sanitizer = line;
      state.recent.push(line);
    }
    if (state.recent.length > KEEP) state.recent.splice(0, state.recent.length - KEEP);
  });
  return {
    mark: () => ({ lines: state.lines, acceptLines: state.acceptLines }),
    since: (m) => ({ lines: state.lines - m.lines, acceptLines: state.acceptLines - m.acceptLines }),
    sanitizer: () => state.sanitizer,
    recent: () => state.recent.slice(),
    tail: (n = 30) => state.recent.slice(-n).join('\n'),
  };
}

// Starts toolport with the testing pack (TOOLPORT_TEST_PACK=1) and the conformance pack, for
// one test (stopped when it ends; the harness then also checks stderr for sanitizer reports).
// `wrapper` runs it under e.g. prlimit; `logLevel` passes --log-level; `headers` go with
// every request (an operator's Authorization when the server requires tokens), unless a
// request sets its own. Honours TOOLPORT_TEST_IO_THREADS like every harness server.
export async function startServer(t, { config = null, env = {}, packs = 'conformance,testing', wrapper = [], logLevel, headers = {} } = {}) {
  const extraArgs = logLevel ? ['--log-level', logLevel] : [];
  const server = await startHttpServer({ config, env: { TOOLPORT_TEST_PACK: '1', ...env }, packs, wrapper, extraArgs });
  t.after(() => server.stop());
  server.test = t;
  server.headers = headers;
  server.pid = server.child.pid;
  server.log = watchLog(server.child);
  // A sanitizer's shadow memory makes the address space terabytes large.
  server.sanitized = procStatus(server).vmSizeKb > 2 ** 30;
  server.slow = envNumber('TOOLPORT_FAULTS_SLOW') ?? (server.sanitized ? 3 : 1);
  server.rssSlackKb = (envNumber('TOOLPORT_FAULTS_RSS_SLACK_MB') ?? (server.sanitized ? 384 : 64)) * 1024;
  server.idleCpu = envNumber('TOOLPORT_FAULTS_IDLE_CPU') ?? 0.05;
  return server;
}

// ------------------------------------------------------------------ HTTP without pools

// One HTTP request on its own connection (Connection: close). Never rejects: the result says
// what happened. `timeoutMs` bounds the whole exchange (timedOut: true), `abortAfterMs` makes
// the client leave on purpose (aborted: true). SSE bodies are parsed as they arrive; the
// handle's `events` grows live and `waitFor` waits for an event. Times are performance.now():
// the result's `endedAt` is when the exchange ended, `ms` how long it took.
export function open(server, { method = 'POST', path = '/mcp', headers = {}, body, timeoutMs = 10000, abortAfterMs } = {}) {
  const payload = body === undefined ? null : Buffer.from(typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body));
  const h = { ...server.headers, ...headers };
  if (payload) h['Content-Length'] = String(payload.length);
  const started = performance.now();
  const handle = { events: [], messages: [], status: null, headers: null, socket: null };
  const waiters = new Set();
  let buffer = '';
  let text = '';
  let settle;
  handle.done = new Promise((resolve) => (settle = resolve));
  let settled = false;
  const finish = (extra) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    clearTimeout(abortTimer);
    req.destroy();
    const type = handle.headers?.['content-type'] ?? '';
    let json;
    if (type.startsWith('application/json') && text.length) {
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      if (json !== undefined) handle.messages.push(...(Array.isArray(json) ? json : [json]));
    }
    for (const w of waiters) w();
    gotResponse(handle.status !== null);
    settle({
      status: handle.status,
      headers: handle.headers ?? {},
      text,
      json,
      events: handle.events,
      messages: handle.messages,
      ended: false,
      timedOut: false,
      aborted: false,
      error: null,
      ms: performance.now() - started,
      endedAt: performance.now(),
      ...extra,
    });
  };
  const req = http.request({ host: '127.0.0.1', port: server.port, method, path, headers: h, agent: false });
  req.on('socket', (s) => (handle.socket = s));
  let gotResponse;
  handle.response = new Promise((resolve) => (gotResponse = resolve));
  req.on('response', (res) => {
    handle.status = res.statusCode;
    handle.headers = res.headers;
    gotResponse(true);
    const sse = (res.headers['content-type'] ?? '').startsWith('text/event-stream');
    res.setEncoding('utf8');
    res.on('data', (d) => {
      text += d;
      if (!sse) return;
      buffer += d.replace(/\r\n/g, '\n');
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = [];
        let event = 'message';
        let id;
        for (const line of block.split('\n')) {
          if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          else if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('id:')) id = line.slice(3).trim();
        }
        const joined = data.join('\n');
        if (!data.length || joined.trim() === '') continue;
        const e = { event, data: joined, id };
        handle.events.push(e);
        if (event === 'message') {
          try {
            handle.messages.push(JSON.parse(joined));
          } catch {
            /* not JSON: kept as an event */
          }
        }
        for (const w of waiters) w();
      }
    });
    res.on('end', () => finish({ ended: true }));
    res.on('aborted', () => finish({ error: 'aborted by the server' }));
    res.on('error', (e) => finish({ error: e.code ?? e.message }));
    res.on('close', () => finish({ error: 'connection closed before the response ended' }));
  });
  req.on('error', (e) => finish({ error: e.code ?? e.message }));
  const timer = setTimeout(() => finish({ timedOut: true }), timeoutMs);
  const abortTimer = abortAfterMs === undefined ? null : setTimeout(() => finish({ aborted: true }), abortAfterMs);
  req.end(payload ?? undefined);
  handle.abort = () => finish({ aborted: true });
  // Resolves with the first event matching `pred` (false when `ms` passes or the response ends).
  handle.waitFor = (pred, ms = 5000) =>
    new Promise((resolve) => {
      const check = () => {
        const hit = handle.events.find(pred);
        if (hit || settled) {
          clearTimeout(t);
          waiters.delete(check);
          resolve(hit ?? false);
        }
      };
      const t = setTimeout(() => {
        waiters.delete(check);
        resolve(false);
      }, ms);
      waiters.add(check);
      check();
    });
  handle.elapsed = () => performance.now() - started;
  handle.startedAt = started;
  return handle;
}

export const send = (server, options) => open(server, options).done;

// (d): the request was answered (a status and a body, read to its end), not left hanging.
export function assertAnswered(res, what) {
  assert.ok(!res.timedOut, `${what}: no answer within ${Math.round(res.ms)} ms (left hanging)`);
  assert.equal(res.error, null, `${what}: ${res.error} (status ${res.status}, body: ${String(res.text).slice(0, 200)})`);
  assert.equal(typeof res.status, 'number', `${what}: no HTTP status`);
  assert.ok(res.ended, `${what}: the response did not end`);
  assert.ok(res.status === 202 || res.status === 204 || res.text.length > 0 || (res.status === 200 && res.headers['content-length'] === '0'),
    `${what}: HTTP ${res.status} without a body`);
}

// ------------------------------------------------------------------ MCP over that

export function mcpHeaders(session, extra = {}) {
  const h = { 'Content-Type': 'application/json', Accept: ACCEPT_BOTH, ...extra };
  if (session?.sessionId) h['Mcp-Session-Id'] = session.sessionId;
  // The version header exists from 2025-06-18 on; older clients do not send it.
  if (session?.version && session.version >= '2025-06-18') h['MCP-Protocol-Version'] = session.version;
  return h;
}

export const rpc = (id, method, params) => (params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
export const toolCall = (id, name, args = {}, meta) =>
  rpc(id, 'tools/call', meta ? { name, arguments: args, _meta: meta } : { name, arguments: args });

// initialize + notifications/initialized on Streamable HTTP; returns { sessionId, version }.
export async function initSession(server, version = LATEST, { timeoutMs = 10000 } = {}) {
  const res = await send(server, {
    headers: mcpHeaders(null),
    body: rpc(1, 'initialize', { protocolVersion: version, capabilities: {}, clientInfo: CLIENT_INFO }),
    timeoutMs,
  });
  assertAnswered(res, `initialize (${version})`);
  assert.equal(res.status, 200, `initialize (${version}): ${res.status} ${res.text.slice(0, 300)}`);
  const sessionId = res.headers['mcp-session-id'];
  assert.ok(sessionId, 'initialize returns an Mcp-Session-Id');
  const reply = res.messages.find((m) => m.id === 1);
  assert.equal(reply?.result?.protocolVersion, version, res.text.slice(0, 300));
  const session = { sessionId, version };
  const ack = await notify(server, session, 'notifications/initialized', undefined, { timeoutMs });
  assert.equal(ack.status, 202, `notifications/initialized: ${ack.status} ${ack.text}`);
  return session;
}

export function notify(server, session, method, params, { timeoutMs = 10000 } = {}) {
  const body = params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
  return send(server, { headers: mcpHeaders(session), body, timeoutMs });
}

export function endSession(server, session, { timeoutMs = 10000 } = {}) {
  return send(server, { method: 'DELETE', headers: mcpHeaders(session), timeoutMs });
}

// A 2026-07-28 request: no session; version, capabilities and client info in _meta, the
// method and name mirrored in headers.
export function statelessRequest(id, method, params = {}) {
  const body = rpc(id, method, {
    ...params,
    _meta: {
      ...(params._meta ?? {}),
      'io.modelcontextprotocol/protocolVersion': STATELESS,
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
    },
  });
  const headers = { 'Content-Type': 'application/json', Accept: ACCEPT_BOTH, 'MCP-Protocol-Version': STATELESS, 'Mcp-Method': method };
  if (method === 'tools/call' || method === 'prompts/get') headers['Mcp-Name'] = params.name;
  if (method === 'resources/read') headers['Mcp-Name'] = params.uri;
  return { body, headers };
}

// The legacy HTTP+SSE transport (2024-11-05): GET /sse, then POST /messages?sessionId=;
// every answer arrives on the stream. Returns the open stream and the endpoint path.
export async function openLegacySession(server, { timeoutMs = 10000 } = {}) {
  const stream = open(server, { method: 'GET', path: '/sse', headers: { Accept: 'text/event-stream' }, timeoutMs: 600000 });
  const endpoint = await stream.waitFor((e) => e.event === 'endpoint', timeoutMs);
  assert.ok(endpoint, `GET /sse: no endpoint event (status ${stream.status})`);
  const post = (message) =>
    send(server, { path: endpoint.data, headers: { 'Content-Type': 'application/json' }, body: message, timeoutMs });
  const init = await post(rpc(1, 'initialize', { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: CLIENT_INFO }));
  assert.equal(init.status, 202, `legacy initialize: ${init.status} ${init.text}`);
  const reply = await stream.waitFor((e) => e.event === 'message' && JSON.parse(e.data).id === 1, timeoutMs);
  assert.ok(reply, 'legacy initialize: no reply on the stream');
  assert.equal(JSON.parse(reply.data).result.protocolVersion, '2024-11-05');
  const ack = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  assert.equal(ack.status, 202);
  return { stream, endpoint: endpoint.data, post };
}

// ------------------------------------------------------------------ raw sockets

// A TCP connection to the server that the test drives byte by byte.
export function connect(server) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ port: server.port, host: '127.0.0.1' });
    sock.once('connect', () => {
      sock.off('error', reject);
      resolve(sock);
    });
    sock.once('error', reject);
  });
}

// Tracks what the server does to a raw socket: `closedAt` is set when the server ends or
// resets the connection; `data` collects what it sent.
export function watchSocket(sock) {
  const w = { data: '', closedAt: null, error: null };
  sock.setEncoding('latin1');
  sock.on('data', (d) => (w.data += d));
  sock.on('error', (e) => (w.error = e.code ?? e.message));
  const closed = () => {
    if (w.closedAt === null) w.closedAt = performance.now();
  };
  sock.on('end', closed);
  sock.on('close', closed);
  return w;
}

// ------------------------------------------------------------------ the checks

async function waitFdsStable(server, { stableMs = 500, maxMs = 5000 } = {}) {
  const deadline = performance.now() + maxMs;
  let last = fdCount(server);
  let since = performance.now();
  while (performance.now() < deadline) {
    await sleep(100);
    const n = fdCount(server);
    if (n !== last) {
      last = n;
      since = performance.now();
    } else if (performance.now() - since >= stableMs) break;
  }
  return last;
}

// (e): a fresh session initializes and a tool call succeeds; the session is ended again.
export async function assertServing(server, what = 'after the fault') {
  assertAlive(server);
  const session = await initSession(server, LATEST, { timeoutMs: 5000 * server.slow });
  const res = await send(server, { headers: mcpHeaders(session), body: toolCall(2, 'test_simple_text'), timeoutMs: 5000 * server.slow });
  assertAnswered(res, `${what}: tools/call`);
  assert.equal(res.status, 200, `${what}: tools/call: ${res.text.slice(0, 300)}`);
  const reply = res.messages.find((m) => m.id === 2);
  assert.ok(reply?.result?.content?.length, `${what}: tools/call result: ${res.text.slice(0, 300)}`);
  const bye = await endSession(server, session, { timeoutMs: 5000 * server.slow });
  assertAnswered(bye, `${what}: DELETE`);
  assert.equal(server.log.sanitizer(), null, `${what}: sanitizer report:\n${server.log.tail(60)}`);
  assertAlive(server);
}

// The baseline: measured after start-up and a warm-up that takes the paths the faults use
// (JSON and SSE answers, a call that waits, /metrics, DELETE), once descriptors settle.
export async function takeBaseline(server) {
  const session = await initSession(server, LATEST);
  const calls = [
    toolCall(2, 'test_simple_text'),
    toolCall(3, 'test_sleep', { ms: 20 }),
    toolCall(4, 'test_tool_with_progress', {}, { progressToken: 'warm-up' }),
  ];
  for (const body of calls) {
    const res = await send(server, { headers: mcpHeaders(session), body });
    assertAnswered(res, `warm-up ${body.params.name}`);
    assert.equal(res.status, 200, res.text);
  }
  assertAnswered(await send(server, { method: 'GET', path: '/metrics' }), 'warm-up /metrics');
  assertAnswered(await endSession(server, session), 'warm-up DELETE');
  const fds = await waitFdsStable(server, { maxMs: 3000 * server.slow });
  await sleep(200);
  const { rssKb } = procStatus(server);
  return { fds, rssKb, closeWait: closeWaitSockets(server.port)?.length ?? 0 };
}

// (a) descriptors back to the baseline (given a few seconds to settle) and no socket of the
// server's port left in CLOSE-WAIT, (b) RSS within the slack of the baseline, (c) CPU idle
// while idle, (e) still serving and no sanitizer report.
export async function assertRecovered(server, base, what, { settleMs } = {}) {
  assertAlive(server);
  const deadline = performance.now() + (settleMs ?? 4000 * server.slow);
  let fds = fdCount(server);
  while (fds > base.fds && performance.now() < deadline) {
    await sleep(100);
    fds = fdCount(server);
  }
  if (fds > base.fds) {
    const targets = Object.values(fdTargets(server));
    const sockets = targets.filter((t) => t.startsWith('socket:')).length;
    const cw = closeWaitSockets(server.port);
    assert.fail(
      `${what}: descriptors leaked: ${fds} open, baseline ${base.fds} (${sockets} sockets now; ` +
        `${cw === null ? 'ss unavailable' : `${cw.length} server sockets in CLOSE-WAIT`})`,
    );
  }
  const cw = closeWaitSockets(server.port);
  if (cw !== null) assert.equal(cw.length, 0, `${what}: server sockets left in CLOSE-WAIT:\n${cw.slice(0, 10).join('\n')}`);

  const { rssKb } = procStatus(server);
  assert.ok(
    rssKb <= base.rssKb + server.rssSlackKb,
    `${what}: RSS ${Math.round(rssKb / 1024)} MiB, baseline ${Math.round(base.rssKb / 1024)} MiB ` +
      `(allowed +${Math.round(server.rssSlackKb / 1024)} MiB)`,
  );

  const idle = await cpuShare(server, 1500);
  assert.ok(
    idle.share < server.idleCpu,
    `${what}: CPU not idle while idle: ${Math.round(idle.cpuMs)} ms of CPU in ${Math.round(idle.wallMs)} ms ` +
      `(${(idle.share * 100).toFixed(1)} %, allowed ${(server.idleCpu * 100).toFixed(0)} %)`,
  );
  await assertServing(server, what);
  server.test.diagnostic(
    `${what}: ${fds} fds (baseline ${base.fds}), RSS ${Math.round(rssKb / 1024)} MiB (baseline ${Math.round(base.rssKb / 1024)}), ` +
      `idle CPU ${(idle.share * 100).toFixed(1)} %`,
  );
  return { fds, rssKb, idle };
}
