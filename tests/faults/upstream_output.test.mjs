// An upstream that floods what the gateway writes and relays (issue 28, finding 5), and one
// that would read the gateway's secrets from its environment (finding 2): a stdio child
// (tests/fixtures/upstream/noisy_server.mjs) writes 100 KB lines to its stderr as fast as
// the pipe takes them and sends floods of log messages and progress with one call, while
// Toolport runs with tokens in its environment. The log file stays bounded (measured in
// bytes), the drops are counted in /metrics, the call's relayed notifications stay within
// its budget, the child never saw a token, and the server recovers.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, takeBaseline, assertRecovered, assertAnswered, initSession, endSession, send, mcpHeaders, rpc, toolCall } from './lib.mjs';
import { waitFor } from '../integration/lib/harness.mjs';
import { NOISY_SERVER } from '../fixtures/upstream/noisy_server.mjs';

const SECRET = 'fault-campaign-secret-7c1d90';

function sizeOf(file) {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

async function metricTotal(server, name, labels) {
  const res = await send(server, { method: 'GET', path: '/metrics' });
  assertAnswered(res, 'GET /metrics');
  let total = 0;
  for (const line of res.text.split('\n')) {
    if (line.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) {
      total += Number(line.split(' ').pop());
    }
  }
  return total;
}

describe('an upstream flooding stderr and log messages', () => {
  it('keeps the log bounded and the call within its budget, counts the drops, leaks no secret, and recovers', async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-faults-output-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const logFile = path.join(dir, 'toolport.log');
    const server = await startServer(t, {
      env: { TOOLPORT_FAULTS_SECRET: SECRET },
      config: `
log: {file: ${JSON.stringify(logFile)}}
upstreams:
  noisy:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(NOISY_SERVER)}, --name, noisy]
`,
    });
    const session = await initSession(server);
    await waitFor('the upstream listed', async () => {
      const res = await send(server, { headers: mcpHeaders(session), body: rpc(2, 'tools/list') });
      return res.messages.find((m) => m.id === 2)?.result?.tools?.some((x) => x.name === 'flood_stderr');
    }, 20000 * server.slow);
    const base = await takeBaseline(server);
    const before = sizeOf(logFile);

    // 1,500 lines of 100 KB on stderr: 150 MB through the pipe.
    const flood = await send(server, {
      headers: mcpHeaders(session),
      body: toolCall(3, 'flood_stderr', { lines: 1500, bytes: 100_000 }),
      timeoutMs: 60000 * server.slow,
    });
    assertAnswered(flood, 'flood_stderr');
    assert.match(JSON.stringify(flood.messages.find((m) => m.id === 3)?.result), /wrote 1500 stderr lines/);

    // 2,000 log messages and 2,000 progress notifications of 1 KB in one call: 4 MB.
    const chatter = await send(server, {
      headers: mcpHeaders(session),
      body: toolCall(4, 'flood_log', { count: 2000, bytes: 1000 }, { progressToken: 'flood' }),
      timeoutMs: 60000 * server.slow,
    });
    assertAnswered(chatter, 'flood_log');
    assert.match(JSON.stringify(chatter.messages.find((m) => m.id === 4)?.result), /sent 2000 log messages/);
    const relayed = chatter.messages.filter((m) => m.method === 'notifications/message' || m.method === 'notifications/progress');
    const relayedBytes = relayed.reduce((n, m) => n + JSON.stringify(m.params).length, 0);
    t.diagnostic(`${relayed.length} notifications (${relayedBytes} bytes) relayed to the caller of 4 MB`);
    // The default budget is 1 MiB; it counts the upstream's data and our framing differs a
    // little: 10 % slack.
    assert.ok(relayedBytes <= 1024 * 1024 * 1.1, `${relayedBytes} bytes of notifications relayed for one call`);

    const grown = sizeOf(logFile) - before;
    t.diagnostic(`the log grew by ${grown} bytes for 150 MB of stderr and 4 MB of notifications`);
    assert.ok(grown < 2 * 1024 * 1024, `the log grew by ${grown} bytes`);
    assert.ok(await metricTotal(server, 'toolport_upstream_output_dropped_total', { upstream: 'noisy', stream: 'stderr' }) > 1000);
    assert.ok(await metricTotal(server, 'toolport_upstream_output_dropped_total', { upstream: 'noisy', stream: 'call' }) > 0);
    // Every window that dropped something is summarized (10 s windows by default).
    await waitFor('the stderr summary', () => /upstream noisy: dropped \d+ stderr lines/.test(readFileSync(logFile, 'utf8')), 15000 * server.slow);
    // Toolport's secret stayed with Toolport: not in the child's environment, nor logged.
    const env = await send(server, { headers: mcpHeaders(session), body: toolCall(5, 'get_env') });
    assertAnswered(env, 'get_env');
    const seen = env.messages.find((m) => m.id === 5)?.result?.content?.[0]?.text ?? '';
    assert.match(seen, /"PATH":/);
    assert.ok(!seen.includes(SECRET) && !seen.includes('TOOLPORT_FAULTS_SECRET'), 'the secret reached the upstream');
    assert.ok(!readFileSync(logFile, 'utf8').includes(SECRET));

    assertAnswered(await endSession(server, session), 'DELETE');
    await assertRecovered(server, base, 'after the upstream\'s flood');
  });
});
