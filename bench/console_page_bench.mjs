// The operator console's page speed (issue 33: "interactive on a slow laptop in < 1 s; 1,000
// tools and 10,000 calls listed without jank"), measured in Debian's headless Chromium with
// its CPU slowed down (DevTools CPU throttling, 4× by default: what Lighthouse uses to stand
// for a slow device).
//
// A Toolport serves 1,000 tools (a REST catalog fixture) and has 10,000 calls in its audit
// log. For the Tools and the Calls page:
//   - interactive: from navigation start until the list shows its rows and the main thread
//     has had no long task (> 50 ms) for the quiet window after that (the last long task's
//     end, or the first rows, whichever is later);
//   - scrolling the whole list top to bottom over 3 s: frames drawn, frames slower than
//     50 ms (jank), the slowest frame, and the long tasks meanwhile.
//
//   node bench/console_page_bench.mjs               # TOOLPORT_BIN=build/toolport by default
//   CONSOLE_BENCH_THROTTLE=6 CONSOLE_BENCH_TOOLS=1000 CONSOLE_BENCH_CALLS=10000 node bench/console_page_bench.mjs
//
// Figures depend on the machine and its load (uptime is printed): compare runs on one machine.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.env.TOOLPORT_BIN ??= path.join(ROOT, 'build/toolport');
const { startHttpServer, waitFor } = await import('../tests/integration/lib/harness.mjs');
const { launchBrowser } = await import('../tests/integration/lib/console_browser.mjs');
const { startCatalogFixture } = await import('../tests/fixtures/agentpmt/server.mjs');

const THROTTLE = Number(process.env.CONSOLE_BENCH_THROTTLE ?? 4);
const TOOLS = Number(process.env.CONSOLE_BENCH_TOOLS ?? 1000);
const CALLS = Number(process.env.CONSOLE_BENCH_CALLS ?? 10000);
const QUIET_MS = 500;

// Makes `count` tools/call on one session, `parallel` at a time, over the raw wire (the SDK's
// per-call validation would take longer than the server).
async function makeCalls(server, count, parallel = 16) {
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const init = await fetch(server.url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0', id: 0, method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'console-bench', version: '1' } },
    }),
  });
  const session = init.headers.get('mcp-session-id');
  await init.text();
  const h = { ...headers, 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-06-18' };
  await (await fetch(server.url, { method: 'POST', headers: h, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const id = ++next;
      const res = await fetch(server.url, {
        method: 'POST',
        headers: h,
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'greet', arguments: { name: `n${id}` } } }),
      });
      await res.text();
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

// Loads `url` in a fresh tab with the CPU slowed down; resolves once `listSelector` shows rows
// and the main thread has been quiet for QUIET_MS. Returns the tab and its timings.
async function load(browser, url, listSelector) {
  const page = await browser.newPage();
  const cdp = await page.createCDPSession();
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: THROTTLE });
  await page.evaluateOnNewDocument(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, end: e.startTime + e.duration });
    }).observe({ type: 'longtask', buffered: true });
  });
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector(`${listSelector} .vrow`, { timeout: 60000 });
  const rowsAt = await page.evaluate(() => performance.now());
  // Quiet: no long task ended within the last QUIET_MS.
  let lastEnd = 0;
  for (;;) {
    const [now, tasks] = await page.evaluate(() => [performance.now(), window.__longTasks]);
    lastEnd = tasks.reduce((m, t) => Math.max(m, t.end), 0);
    if (now - Math.max(lastEnd, rowsAt) >= QUIET_MS) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const longTasks = await page.evaluate(() => window.__longTasks.length);
  // What the page waited for before its rows: each request that ended by then (start, time to
  // the answer's first byte, end), the server's share of the load.
  const requests = await page.evaluate((until) => performance.getEntriesByType('resource')
    .filter((e) => e.responseEnd <= until)
    .map((e) => `${new URL(e.name).pathname.split('/').pop()}${new URL(e.name).search} ` +
      `${e.startTime.toFixed(0)}+${(e.responseStart - e.startTime).toFixed(0)}..${e.responseEnd.toFixed(0)}`), rowsAt);
  return { page, rows_ms: rowsAt, interactive_ms: Math.max(rowsAt, lastEnd), long_tasks_loading: longTasks, requests };
}

// Scrolls the list from top to bottom over `ms`, a step a frame; frame times from rAF.
async function scroll(page, listSelector, ms = 3000) {
  return page.evaluate(
    async (selector, duration) => {
      const box = document.querySelector(selector);
      const before = window.__longTasks.length;
      const frames = [];
      const start = performance.now();
      let last = start;
      await new Promise((resolve) => {
        const step = (t) => {
          frames.push(t - last);
          last = t;
          const f = Math.min(1, (t - start) / duration);
          box.scrollTop = f * (box.scrollHeight - box.clientHeight);
          if (f < 1) requestAnimationFrame(step);
          else resolve();
        };
        requestAnimationFrame(step);
      });
      frames.shift();
      const sorted = [...frames].sort((a, b) => a - b);
      return {
        rows: box.querySelector('ul')?.getAttribute('style')?.match(/height: (\d+)px/)?.[1] ?? null,
        frames: frames.length,
        janky_frames: frames.filter((d) => d > 50).length,
        p95_frame_ms: Math.round(sorted[Math.floor(sorted.length * 0.95)] * 10) / 10,
        slowest_frame_ms: Math.round(sorted[sorted.length - 1] * 10) / 10,
        long_tasks: window.__longTasks.length - before,
      };
    },
    listSelector,
    ms,
  );
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-console-bench-'));
const fixture = await startCatalogFixture({ tools: TOOLS });
const server = await startHttpServer({
  env: { AGENT_PAYMENT_API_URL: fixture.url, AGENT_PAYMENT_API_KEY: fixture.apiKey, AGENT_PAYMENT_BUDGET_KEY: fixture.budgetKey },
  config:
    `rest:\n  shop:\n    preset: agentpmt\n    base_url: ${fixture.url}\n    refresh_interval_s: 0\n` +
    `audit:\n  enabled: true\n  path: ${path.join(dir, 'audit.jsonl')}\n  fsync: never\n`,
});
try {
  await waitFor('the catalog', async () => {
    // The fixture's catalog and the conformance pack's tools: at least TOOLS in all.
    const b = await (await fetch(`${server.base}/console/api/tools?source=shop`)).json();
    return b.tools.length >= TOOLS - 5;
  }, 60000);
  const started = Date.now();
  await makeCalls(server, CALLS);
  await waitFor('the audit log to hold every call', async () => {
    const b = await (await fetch(`${server.base}/console/api/calls?limit=${CALLS}`)).json();
    return b.records.length >= CALLS;
  }, 60000);
  const callsSeconds = (Date.now() - started) / 1000;
  const total = (await (await fetch(`${server.base}/console/api/tools`)).json()).tools.length;

  const browser = await launchBrowser();
  const results = {};
  try {
    for (const [name, route, list] of [['tools', 'tools', '.vlist'], ['calls', 'calls', '.vlist']]) {
      // The first load fills the browser's cache of the assets, as an operator's second visit would;
      // the measured one is the second.
      const warm = await load(browser, `${server.base}/console/${route}`, list);
      await warm.page.close();
      const { page, ...timings } = await load(browser, `${server.base}/console/${route}`, list);
      const scrolled = await scroll(page, list);
      results[name] = { ...timings, ...scrolled };
      await page.close();
    }
  } finally {
    await browser.close();
  }
  const uptime = os.loadavg().map((l) => l.toFixed(2)).join(' ');
  console.log(`console page bench: CPU throttled ${THROTTLE}x, ${total} tools served, ${CALLS} calls in the audit log ` +
    `(made in ${callsSeconds.toFixed(1)} s); load average ${uptime}; ${os.cpus().length} cores`);
  console.log('| page | rows shown | interactive | long tasks loading | list px | frames | janky (>50 ms) | p95 frame | slowest | long tasks scrolling |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const [name, r] of Object.entries(results)) {
    console.log(`| ${name} | ${r.rows_ms.toFixed(0)} ms | ${r.interactive_ms.toFixed(0)} ms | ${r.long_tasks_loading} | ${r.rows} | ` +
      `${r.frames} | ${r.janky_frames} | ${r.p95_frame_ms} ms | ${r.slowest_frame_ms} ms | ${r.long_tasks} |`);
  }
  console.log('requests before the rows (ms: start+to first byte..end):');
  for (const [name, r] of Object.entries(results)) console.log(`  ${name}: ${r.requests.join(', ')}`);
} finally {
  await server.stop();
  await fixture.close();
  rmSync(dir, { recursive: true, force: true });
}
