// Opens COUNT MCP sessions on a Streamable HTTP endpoint (initialize, then
// notifications/initialized with the Mcp-Session-Id it got), over keep-alive connections,
// CONCURRENCY at a time. Used by run_http_bench.sh to measure memory per open session.
// Sessions are left open on purpose. Prints one JSON line: {opened, failed, seconds}.
//
// Usage: node open_sessions.mjs URL COUNT [CONCURRENCY]     (URL must be on 127.0.0.1)
import http from 'node:http';

const [url, countArg, concArg] = process.argv.slice(2);
const count = Number(countArg);
const concurrency = Number(concArg ?? 16);
const target = new URL(url);
if (target.hostname !== '127.0.0.1' && target.hostname !== 'localhost') {
  console.error('open_sessions.mjs: only loopback URLs are allowed');
  process.exit(2);
}
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });

function post(body, sessionId) {
  const data = JSON.stringify(body);
  const headers = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'Content-Length': Buffer.byteLength(data),
  };
  if (sessionId) {
    headers['Mcp-Session-Id'] = sessionId;
    headers['MCP-Protocol-Version'] = '2025-11-25';
  }
  return new Promise((resolve, reject) => {
    const req = http.request(
      { agent, host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, sessionId: res.headers['mcp-session-id'] }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
};
const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };

let next = 0;
let opened = 0;
let failed = 0;
async function worker() {
  while (next < count) {
    next++;
    try {
      const r = await post(initialize);
      if (r.status !== 200 || !r.sessionId) throw new Error(`initialize: HTTP ${r.status}`);
      const n = await post(initialized, r.sessionId);
      if (n.status !== 202) throw new Error(`initialized: HTTP ${n.status}`);
      opened++;
    } catch (err) {
      if (failed++ < 3) console.error(`open_sessions.mjs: ${err.message}`);
    }
  }
}

const started = process.hrtime.bigint();
await Promise.all(Array.from({ length: concurrency }, worker));
agent.destroy();
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
console.log(JSON.stringify({ opened, failed, seconds: Number(seconds.toFixed(2)) }));
process.exit(failed ? 1 : 0);
