// The operator's endpoints (/metrics, POST /admin/reload) on the real binary: an OAuth
// end user's access token gets 403 there (insufficient_scope naming auth.admin_scope), a
// token with the admin scope and the server's own static token are served; reloads start
// one at a time and at most once per reload.min_interval_s, whoever asks (HTTP, `toolport
// reload`, SIGHUP), later ones answered with the running or last one's report. The REST
// catalog fixture counts the fetches a reload makes.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHttpServer, runToolport, sleep, waitFor } from './lib/harness.mjs';
import { startAuthServer, makeKey } from './lib/auth_server.mjs';
import { startCatalogFixture } from '../fixtures/agentpmt/server.mjs';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const STATIC = 'operator-static-token-7c1d';

function keysFor(fixture) {
  return { AGENT_PAYMENT_API_URL: fixture.url, AGENT_PAYMENT_API_KEY: fixture.apiKey, AGENT_PAYMENT_BUDGET_KEY: fixture.budgetKey };
}

function catalogConfig(fixture) {
  return `rest:\n  shop:\n    preset: agentpmt\n    base_url: ${fixture.url}\n    refresh_interval_s: 0\n`;
}

const fetches = (fixture) => fixture.stats().requests.filter((r) => r.path === '/products/fetch').length;

const reload = (server, token) =>
  fetch(`${server.base}/admin/reload`, { method: 'POST', headers: token ? { Authorization: `Bearer ${token}` } : {} });
const metrics = (server, token) => fetch(`${server.base}/metrics`, { headers: { Authorization: `Bearer ${token}` } });
const audit = (server, token) => fetch(`${server.base}/audit?limit=5`, { headers: { Authorization: `Bearer ${token}` } });
const orchestration = (server, token) =>
  fetch(`${server.base}/orchestration`, { headers: { Authorization: `Bearer ${token}` } });
const AUDIT_DIR = mkdtempSync(path.join(os.tmpdir(), 'toolport-operator-audit-'));

// A server with the server's static token, OAuth from the auth server fixture (`authLines`
// added to auth:, `extra` lines after it) and the REST catalog, once it fetched the catalog;
// stopped with its fixtures after the suite. Fills `env` (as, fixture, server, resource).
function operatorServer(env, authLines = [], extra = []) {
  before(async () => {
    env.fixture = await startCatalogFixture({ tools: 20 });
    env.as = await startAuthServer();
    env.as.keys = [makeKey('ec', 'key-1')];
    env.server = await startHttpServer({
      env: { ...keysFor(env.fixture), OPERATOR_TOKENS: STATIC },
      config: ['http:', '  bearer_tokens_env: OPERATOR_TOKENS', 'auth:', `  issuer: ${env.as.issuer}`, '  allow_http: true',
        ...authLines, ...extra, catalogConfig(env.fixture)].join('\n'),
    });
    env.resource = `http://127.0.0.1:${env.server.port}/mcp`;
    await waitFor('the first catalog fetch', async () => fetches(env.fixture) >= 1);
  });
  after(async () => {
    await env.server?.stop();
    await env.as?.stop();
    await env.fixture?.close();
  });
}

// Without auth.admin_scope no access token reaches the operator's endpoints (and the
// configuration is one today's build reads too).
describe('operator endpoints with OAuth, no admin scope configured', () => {
  const env = {};
  operatorServer(env);

  it('an end user\'s access token gets 403 on /metrics and /admin/reload; the static token 200 and 202', async () => {
    const { as, fixture, server, resource } = env;
    const user = as.token({ sub: 'alice', aud: resource, scope: 'mcp:tools' });
    await sleep(200);
    const before = fetches(fixture);
    for (const res of [await metrics(server, user), await reload(server, user)]) {
      const text = await res.text();
      assert.equal(res.status, 403, text);
      assert.match(JSON.parse(text).error.message, /server's own bearer tokens/);
    }
    await sleep(300);
    assert.equal(fetches(fixture), before, 'a refused reload fetches nothing');
    assert.equal((await metrics(server, STATIC)).status, 200);
    assert.equal((await reload(server, STATIC)).status, 202);
    await waitFor('the reload fetch', async () => fetches(fixture) > before);
  });
});

describe('operator endpoints with OAuth and auth.admin_scope', () => {
  const env = {};
  operatorServer(env, ['  required_scopes: [mcp:tools]', '  admin_scope: toolport:admin'],
    ['reload:', '  min_interval_s: 30', 'audit:', '  enabled: true', `  path: ${path.join(AUDIT_DIR, 'audit.jsonl')}`]);

  it('an end user\'s access token gets 403 insufficient_scope on /metrics, /admin/reload, /audit and /orchestration, and reloads nothing', async () => {
    const { as, fixture, server, resource } = env;
    const user = as.token({ sub: 'alice', aud: resource, scope: 'mcp:tools' });
    const before = fetches(fixture);
    for (const res of [await metrics(server, user), await reload(server, user), await audit(server, user),
      await orchestration(server, user)]) {
      const text = await res.text();
      assert.equal(res.status, 403, text);
      assert.match(res.headers.get('www-authenticate'), /^Bearer error="insufficient_scope", /);
      assert.match(res.headers.get('www-authenticate'), /scope="mcp:tools toolport:admin"/);
      const body = JSON.parse(text);
      assert.match(body.error.message, /toolport:admin/);
      assert.doesNotMatch(JSON.stringify(body), new RegExp(user.slice(0, 20)), 'never the token');
    }
    await sleep(300);
    assert.equal(fetches(fixture), before, 'a refused reload fetches nothing');
    // The same token is an ordinary MCP client.
    const init = await fetch(server.url, {
      method: 'POST',
      headers: { Authorization: `Bearer ${user}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
    });
    assert.equal(init.status, 200);
  });

  it('a token with the admin scope and the static token are served; a reload too soon after reports the last one', async () => {
    const { as, fixture, server, resource } = env;
    // The metadata publishes the admin scope with the others, so an operator's client can ask for it.
    const prm = await (await fetch(`${server.base}/.well-known/oauth-protected-resource/mcp`)).json();
    assert.deepEqual(prm.scopes_supported, ['mcp:tools', 'toolport:admin']);
    const admin = as.token({ sub: 'ops', aud: resource, scope: 'mcp:tools toolport:admin' });
    const metricsRes = await metrics(server, admin);
    assert.equal(metricsRes.status, 200);
    assert.match(await metricsRes.text(), /toolport_http_requests_total/);
    assert.equal((await metrics(server, STATIC)).status, 200);
    // The audit log and the orchestration summary, as the operator reads them.
    for (const token of [admin, STATIC]) {
      const records = await audit(server, token);
      assert.equal(records.status, 200);
      assert.ok(Array.isArray((await records.json()).records));
      const summary = await orchestration(server, token);
      assert.equal(summary.status, 200);
      assert.equal(typeof (await summary.json()), 'object');
    }

    const before = fetches(fixture);
    const started = await reload(server, admin);
    assert.equal(started.status, 202);
    assert.deepEqual(await started.json(), { reloading: ['shop'], started: true });
    await waitFor('the reload fetch', async () => fetches(fixture) > before);

    const again = await reload(server, STATIC);
    assert.equal(again.status, 200);
    assert.ok(Number(again.headers.get('retry-after')) >= 1, again.headers.get('retry-after'));
    const report = await again.json();
    assert.equal(report.started, false);
    assert.deepEqual(report.reloading, ['shop']);
    assert.match(report.message, /the (last reload|reload) started .* ago/);
    await sleep(300);
    assert.equal(fetches(fixture), before + 1, 'the second request fetched nothing');
  });
});

describe('reloads: one at a time, at most one per interval', () => {
  let fixture;
  before(async () => {
    fixture = await startCatalogFixture({ tools: 20 });
  });
  after(async () => {
    await fixture?.close();
  });

  it('20 concurrent POST /admin/reload start one reload (one 202, one catalog fetch); the rest get its report', async (t) => {
    // The default reload.min_interval_s (3 s).
    const server = await startHttpServer({ env: keysFor(fixture), config: catalogConfig(fixture) });
    t.after(() => server.stop());
    await waitFor('the first catalog fetch', async () => fetches(fixture) >= 1);
    await sleep(200);
    const before = fetches(fixture);
    const answers = await Promise.all(Array.from({ length: 20 }, () => reload(server)));
    const statuses = answers.map((r) => r.status).sort();
    assert.equal(statuses.filter((s) => s === 202).length, 1, `one reload started: ${statuses.join(' ')}`);
    assert.equal(statuses.filter((s) => s === 200).length, 19, `the others were answered with it: ${statuses.join(' ')}`);
    for (const r of answers) assert.deepEqual((await r.json()).reloading, ['shop']);
    await waitFor('the reload fetch', async () => fetches(fixture) > before);
    await sleep(500);
    assert.equal(fetches(fixture), before + 1, 'one fetch for 20 requests');
    const text = await (await fetch(`${server.base}/metrics`)).text();
    assert.match(text, /toolport_reloads_total\{outcome="started"\} 1\b/);
    assert.match(text, /toolport_reloads_total\{outcome="coalesced"\} 19\b/);
  });

  it('`toolport reload` and SIGHUP say when they started nothing; after the interval a reload starts again', async (t) => {
    const server = await startHttpServer({ env: keysFor(fixture), config: catalogConfig(fixture) });
    t.after(() => server.stop());
    await waitFor('the first catalog fetch', async () => fetches(fixture) >= 1);
    await sleep(200);
    const before = fetches(fixture);

    const first = await runToolport(['reload', '--url', server.base]);
    assert.equal(first.status, 0, first.stderr);
    assert.deepEqual(JSON.parse(first.stdout), { reloading: ['shop'], started: true });
    const second = await runToolport(['reload', '--url', server.base]);
    assert.equal(second.status, 0, second.stderr);
    assert.match(second.stderr, /toolport reload: not started: the (last reload|reload) started [0-9.]+ s ago/);
    assert.equal(JSON.parse(second.stdout).started, false);

    server.child.kill('SIGHUP');
    await waitFor('the SIGHUP log line', async () => /SIGHUP: reload not started/.test(server.logs()));
    await sleep(300);
    assert.equal(fetches(fixture), before + 1, 'one fetch for three asks');

    await sleep(3000);
    server.child.kill('SIGHUP');
    await waitFor('the reload after the interval', async () => fetches(fixture) > before + 1);
  });
});
