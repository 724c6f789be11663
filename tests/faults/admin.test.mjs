// The operator's endpoint under a storm: 200 POST /admin/reload, 50 at a time, half with an
// OAuth end user's access token (refused 403 insufficient_scope, reloading nothing), half
// with the server's own token; then 50 SIGHUPs in a burst. A REST catalog is configured, so
// every reload that starts costs the API a fetch: at most one starts per
// reload.min_interval_s and never while one runs, the rest are answered with its report.
// Then the server is back to its baseline and serving.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, takeBaseline, assertRecovered, assertAnswered, send, sleep } from './lib.mjs';
import { startAuthServer, makeKey } from '../integration/lib/auth_server.mjs';
import { startCatalogFixture } from '../fixtures/agentpmt/server.mjs';

const STATIC = 'faults-operator-token-51e0';
const INTERVAL_S = 1;

describe('reload storm', () => {
  let as, fixture;
  before(async () => {
    as = await startAuthServer();
    as.keys = [makeKey('ec', 'key-1')];
    fixture = await startCatalogFixture({ tools: 20 });
  });
  after(async () => {
    await as?.stop();
    await fixture?.close();
  });

  it('200 POST /admin/reload (50 at a time, half from end users) and 50 SIGHUPs start a bounded number of reloads; end users get 403', async (t) => {
    const server = await startServer(t, {
      env: {
        FAULTS_TOKENS: STATIC,
        AGENT_PAYMENT_API_URL: fixture.url,
        AGENT_PAYMENT_API_KEY: fixture.apiKey,
        AGENT_PAYMENT_BUDGET_KEY: fixture.budgetKey,
      },
      headers: { Authorization: `Bearer ${STATIC}` },
      config: [
        'http:',
        '  bearer_tokens_env: FAULTS_TOKENS',
        'auth:',
        `  issuer: ${as.issuer}`,
        '  allow_http: true',
        '  admin_scope: toolport:admin',
        'reload:',
        `  min_interval_s: ${INTERVAL_S}`,
        'rest:',
        '  shop:',
        '    preset: agentpmt',
        `    base_url: ${fixture.url}`,
        '    refresh_interval_s: 0',
        '',
      ].join('\n'),
    });
    const fetches = () => fixture.stats().requests.filter((r) => r.path === '/products/fetch').length;
    const deadline = performance.now() + 10000 * server.slow;
    while (fetches() < 1 && performance.now() < deadline) await sleep(50);
    assert.ok(fetches() >= 1, 'the first catalog fetch');
    const user = as.token({ sub: 'mallory', aud: `http://127.0.0.1:${server.port}/mcp` });
    // Warm-up: the first access token makes the server fetch the issuer's keys, on a
    // connection its HTTP client then keeps; the baseline counts it.
    const first = await send(server, { path: '/admin/reload', headers: { Authorization: `Bearer ${user}` } });
    assertAnswered(first, 'the first end user\'s reload');
    assert.equal(first.status, 403, first.text);
    const base = await takeBaseline(server);
    const before = fetches();

    const started = performance.now();
    const results = [];
    for (let wave = 0; wave < 4; wave++) {
      const batch = Array.from({ length: 50 }, (_, i) => {
        const endUser = i % 2 === 0;
        return send(server, {
          path: '/admin/reload',
          headers: { Authorization: `Bearer ${endUser ? user : STATIC}` },
          timeoutMs: 10000 * server.slow,
        }).then((res) => ({ endUser, res }));
      });
      results.push(...(await Promise.all(batch)));
    }
    const stormMs = performance.now() - started;
    for (const { endUser, res } of results) {
      assertAnswered(res, endUser ? 'an end user\'s reload' : 'an operator\'s reload');
      if (endUser) {
        assert.equal(res.status, 403, res.text);
        assert.match(res.headers['www-authenticate'] ?? '', /error="insufficient_scope"/);
      } else {
        assert.ok(res.status === 202 || res.status === 200, `${res.status} ${res.text}`);
        assert.deepEqual(res.json?.reloading, ['shop'], res.text);
      }
    }
    const startedCount = results.filter(({ res }) => res.status === 202).length;
    // One at the start, then at most one per interval of the storm's length.
    const bound = 1 + Math.ceil(stormMs / (INTERVAL_S * 1000));
    assert.ok(startedCount >= 1 && startedCount <= bound, `${startedCount} reloads started in ${Math.round(stormMs)} ms (bound ${bound})`);
    await sleep(500);
    const fetched = fetches() - before;
    assert.ok(fetched >= 1 && fetched <= startedCount, `${fetched} catalog fetches for ${startedCount} reloads started`);

    // 50 SIGHUPs in a burst: at most one reload per interval again.
    await sleep(INTERVAL_S * 1000);
    const beforeSignals = fetches();
    const signalsStarted = performance.now();
    for (let i = 0; i < 50; i++) process.kill(server.pid, 'SIGHUP');
    const signalMs = performance.now() - signalsStarted;
    await sleep(500);
    const signalFetches = fetches() - beforeSignals;
    assert.ok(
      signalFetches <= 1 + Math.ceil((signalMs + 500) / (INTERVAL_S * 1000)),
      `${signalFetches} catalog fetches for 50 SIGHUPs in ${Math.round(signalMs)} ms`,
    );
    t.diagnostic(`storm: ${results.length} requests in ${Math.round(stormMs)} ms, ${startedCount} reloads started, ` +
      `${fetched} fetches; 50 SIGHUPs: ${signalFetches} fetches`);

    const metrics = await send(server, { method: 'GET', path: '/metrics' });
    assert.equal(metrics.status, 200);
    const count = (outcome) => Number(metrics.text.match(new RegExp(`toolport_reloads_total\\{outcome="${outcome}"\\} (\\d+)`))?.[1] ?? 0);
    assert.ok(count('started') >= startedCount, metrics.text.match(/toolport_reloads_total.*/g)?.join('\n'));
    assert.ok(count('coalesced') >= 100 - startedCount, metrics.text.match(/toolport_reloads_total.*/g)?.join('\n'));

    await assertRecovered(server, base, 'reload storm');
  });
});
