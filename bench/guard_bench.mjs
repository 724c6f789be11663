// What a webhook guard adds to a call: the same tools/call, one at a time, on two Toolport
// servers, one with a no-op local webhook guard on the tool (phases: [before]) and one
// without; then the webhook's own round trip from this process, and the check time Toolport
// measured itself (toolport_guard_check_seconds). Prints p50/p90 of each. Node built-ins only.
//
//   node bench/guard_bench.mjs TOOLPORT_BIN [CALLS]
import http from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';

const bin = process.argv[2];
const calls = Number(process.argv[3] ?? 3000);
if (!bin) {
  console.error('usage: node bench/guard_bench.mjs TOOLPORT_BIN [CALLS]');
  process.exit(2);
}
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function postJson(port, p, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(
      { host: '127.0.0.1', port, path: p, method: 'POST', agent,
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Content-Length': Buffer.byteLength(data), ...headers } },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

async function startToolport(config) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-guard-bench-'));
  const file = path.join(dir, 'toolport.yaml');
  writeFileSync(file, config);
  const port = await freePort();
  const child = spawn(bin, ['serve', '--listen', `127.0.0.1:${port}`, '--packs', 'conformance', '--config', file], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, TOOLPORT_LOG_LEVEL: 'warn' },
  });
  for (let i = 0; i < 200; i++) {
    await new Promise((r) => setTimeout(r, 25));
    try {
      const init = await postJson(port, '/mcp', { jsonrpc: '2.0', id: 1, method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } });
      const session = init.headers['mcp-session-id'];
      const h = { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-11-25' };
      await postJson(port, '/mcp', { jsonrpc: '2.0', method: 'notifications/initialized' }, h);
      return { port, child, headers: h, stop: () => { child.kill('SIGTERM'); rmSync(dir, { recursive: true, force: true }); } };
    } catch {
      // not listening yet
    }
  }
  child.kill('SIGTERM');
  throw new Error('toolport did not start');
}

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const us = (ns) => (Number(ns) / 1000).toFixed(1);

async function timeCalls(server, n) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const started = process.hrtime.bigint();
    const r = await postJson(server.port, '/mcp',
      { jsonrpc: '2.0', id: i + 2, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } }, server.headers);
    times.push(Number(process.hrtime.bigint() - started));
    if (r.status !== 200 || r.text.includes('MCP_GUARD')) throw new Error(`call failed: ${r.status} ${r.text}`);
  }
  return times;
}

// The no-op guard: allows everything, at once.
const hook = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': 20 });
    res.end('{"decision":"allow"}');
  });
});
await new Promise((r) => hook.listen(0, '127.0.0.1', r));
const hookPort = hook.address().port;

const plain = await startToolport('pipeline: {}\n');
const guarded = await startToolport(`
guards:
  noop:
    webhook: {url: "http://127.0.0.1:${hookPort}/verdict"}
    phases: [before]
tools:
  test_simple_text: {guards: [noop]}
`);
try {
  // Warm-up, then the runs interleaved in rounds so that load from elsewhere hits both alike.
  await timeCalls(plain, 300);
  await timeCalls(guarded, 300);
  const without = [], withGuard = [], roundTrip = [];
  for (let round = 0; round < 10; round++) {
    without.push(...(await timeCalls(plain, calls / 10)));
    withGuard.push(...(await timeCalls(guarded, calls / 10)));
    for (let i = 0; i < calls / 10; i++) {
      const started = process.hrtime.bigint();
      await postJson(hookPort, '/verdict', { version: 1, phase: 'before', tool: 'test_simple_text', arguments: {} });
      roundTrip.push(Number(process.hrtime.bigint() - started));
    }
  }
  const metrics = await new Promise((resolve) => {
    http.get({ host: '127.0.0.1', port: guarded.port, path: '/metrics' }, (res) => {
      let t = '';
      res.on('data', (c) => (t += c));
      res.on('end', () => resolve(t));
    });
  });
  const sum = Number(/toolport_guard_check_seconds_sum\{guard="noop"\} ([0-9.e-]+)/.exec(metrics)?.[1] ?? NaN);
  const count = Number(/toolport_guard_check_seconds_count\{guard="noop"\} ([0-9]+)/.exec(metrics)?.[1] ?? NaN);
  const p50 = (xs) => percentile(xs, 50);
  console.log(`calls per server: ${without.length}`);
  console.log(`tools/call without guard      p50 ${us(p50(without))} us   p90 ${us(percentile(without, 90))} us`);
  console.log(`tools/call with webhook guard p50 ${us(p50(withGuard))} us   p90 ${us(percentile(withGuard, 90))} us`);
  console.log(`added by the guard (p50)          ${us(p50(withGuard) - p50(without))} us`);
  console.log(`webhook round trip from Node  p50 ${us(p50(roundTrip))} us`);
  console.log(`guard check as Toolport timed it (mean of ${count}) ${(sum / count * 1e6).toFixed(1)} us`);
  console.log(`added beyond the webhook round trip (p50 added - Node round trip p50) ${us(p50(withGuard) - p50(without) - p50(roundTrip))} us`);
} finally {
  plain.stop();
  guarded.stop();
  hook.close();
  agent.destroy();
}
