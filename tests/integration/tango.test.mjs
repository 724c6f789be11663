// The tango pack in the real binary against the Tango fixture (tests/fixtures/tango), which
// speaks the API's wire format: the YAML specs of tests/specs/tango run by `toolport test`,
// the fixture's view of caching and request spacing, API failures, the per-client key
// header over HTTP, HTTPS with a CA the test makes, and two replicas on Redis sharing one
// cached result.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runToolport, startHttpServer, post, initializeSession, freePort, LATEST, REDIS, startRedis, stopRedis } from './lib/harness.mjs';
import { startTangoFixture } from '../fixtures/tango/server.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SPECS = path.resolve(HERE, '../specs/tango');
const KEY = 'fixture-key';

function writeConfig(dir, name, text) {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

// The toolport CLI with the fixture's key in its environment.
const toolport = (args, env = {}, timeoutMs = 60000) => runToolport(args, { env: { TANGO_API_KEY: KEY, ...env }, timeoutMs });

// `toolport call TOOL ARGS --json --config FILE` (in process); the parsed result.
async function callInProcess(configFile, tool, args, env = {}) {
  const run = await toolport(['call', tool, JSON.stringify(args), '--json', '--config', configFile], env);
  assert.ok(run.status === 0 || run.status === 1, `toolport call failed (${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout);
}

// An error's fields: its structuredContent, or _meta['toolport/error'] where the engine moved
// them because they did not match the tool's outputSchema (error_result_guard.hpp).
const fields = (result) => result.structuredContent ?? result._meta?.['toolport/error'];
const code = (result) => fields(result)?.error_code ?? 'OK';

describe('tango pack against the fixture', () => {
  let fixture;
  let dir;
  let configFile;

  before(async () => {
    fixture = await startTangoFixture({ apiKeys: [KEY] });
    dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-tango-'));
    configFile = writeConfig(dir, 'tango.yaml', `packs:\n  tango:\n    base_url: ${fixture.url}\n`);
  });
  after(async () => {
    await fixture?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('passes the YAML specs, with the cache and the spacing seen from the fixture', async () => {
    fixture.reset();
    const run = await toolport(['test', SPECS, '--config', configFile]);
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /15 passed, 0 failed/);
    const stats = fixture.stats();
    // The search made twice (zz_cache_*.yaml) reached Tango once.
    assert.equal(stats.requests.filter((r) => r.query.search === 'janitorial').length, 1);
    // Refused arguments never reached it: no request carries the bad date or UEI.
    assert.ok(!stats.requests.some((r) => r.query.award_date_gte === '01/15/2024' || r.query.uei === 'O553JH75Z8K1'));
    // The vendor-by-month summary over last_months was one metrics request.
    assert.ok(stats.requests.some((r) => r.path === '/api/entities/N553JH75Z8K1/metrics/120/month/'));
    // Every request to Tango was 100 ms after the one before (the pacer spaces the starts of
    // requests; connection set-up and a loaded machine's scheduling shift arrivals by tens of
    // ms). Unpaced, they would arrive together.
    assert.ok(stats.min_gap_ms >= 50, `requests ${stats.min_gap_ms} ms apart`);
    assert.ok(stats.requests.every((r) => r.has_key));
  });

  it('maps a 429, a 5xx and a 200 carrying an error, and retries a reset connection', async () => {
    fixture.reset();
    fixture.nextResponse({ status: 429, headers: { 'Retry-After': '45' },
                           body: { detail: 'Rate limit exceeded for burst. Please try again in 45 seconds.', wait_in_seconds: 45 } });
    const limited = await callInProcess(configFile, 'search_tango_contracts', { query: 'a' });
    assert.equal(code(limited), 'RATE_LIMITED');
    assert.equal(fields(limited).retry_after_ms, 45000);

    fixture.nextResponse({ status: 500, body: { detail: 'Internal server error' } });
    const broken = await callInProcess(configFile, 'search_tango_contracts', { query: 'b' });
    assert.equal(code(broken), 'UPSTREAM_ERROR');
    assert.equal(fields(broken).transient, true);

    fixture.nextResponse({ status: 200, body: { error: 'search backend unavailable' } });
    assert.equal(code(await callInProcess(configFile, 'search_tango_contracts', { query: 'c' })), 'UPSTREAM_ERROR');

    fixture.nextResponse({ reset: true });
    const retried = await callInProcess(configFile, 'search_tango_contracts', { query: 'cloud', limit: 1 });
    assert.equal(code(retried), 'OK');
    assert.equal(retried._meta.downstream_api_calls, 2);  // the reset attempt counts too
    assert.equal(retried.structuredContent.execution.api_calls, 2);
  });

  it('takes the key from the X-Tango-Api-Key header over HTTP, and shows Tango on /health', async () => {
    const server = await startHttpServer({ config: `packs:\n  tango:\n    base_url: ${fixture.url}\n`, packs: 'tango',
                                           env: { TANGO_API_KEY: '' } });
    try {
      const call = async (headers) => {
        const { sessionId } = await initializeSession(server, LATEST, headers);
        const res = await post(server, { jsonrpc: '2.0', id: 5, method: 'tools/call',
                                         params: { name: 'search_tango_grants', arguments: { limit: 1 } } },
                               { sessionId, protocolVersion: LATEST, headers });
        return res.messages.find((m) => m.id === 5).result;
      };
      assert.equal(code(await call({})), 'MISSING_API_KEY');
      const ok = await call({ 'X-Tango-Api-Key': KEY });
      assert.equal(code(ok), 'OK');
      assert.equal(ok.structuredContent.returned, 1);
      const health = await (await fetch(`${server.base}/health`)).json();
      assert.ok(JSON.stringify(health).includes('tango'), JSON.stringify(health));
    } finally {
      await server.stop();
    }
  });
});

describe('tango pack over HTTPS', () => {
  let dir;
  let fixture;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-tango-tls-'));
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key,
                             '-out', cert, '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'],
                 { stdio: 'ignore' });
    fixture = await startTangoFixture({ apiKeys: [KEY], tls: { cert: readFileSync(cert), key: readFileSync(key) } });
  });
  after(async () => {
    await fixture?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('verifies the certificate against the configured CA, and refuses it without', async () => {
    const trusted = writeConfig(dir, 'trusted.yaml',
                                `packs:\n  tango:\n    base_url: ${fixture.url}\ndownstream:\n  ca_file: ${path.join(dir, 'cert.pem')}\n`);
    const ok = await callInProcess(trusted, 'get_tango_vendor_profile', { uei: 'C47BNA8GM833', include_recent_contracts: false });
    assert.equal(code(ok), 'OK', JSON.stringify(ok));
    assert.equal(ok.structuredContent.data[0].legal_business_name, 'ACCENTURE FEDERAL SERVICES LLC');

    const untrusted = writeConfig(dir, 'untrusted.yaml', `packs:\n  tango:\n    base_url: ${fixture.url}\n`);
    const refused = await callInProcess(untrusted, 'get_tango_vendor_profile', { uei: 'C47BNA8GM833' }, { SSL_CERT_FILE: '/nonexistent' });
    assert.equal(code(refused), 'UPSTREAM_ERROR');
    assert.match(fields(refused).error, /certificate verify failed/);
  });
});

describe('tango pack on two replicas sharing Redis', { skip: !REDIS && 'redis-server is not installed' }, () => {
  let dir;
  let redis;
  let fixture;
  let a;
  let b;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-tango-redis-'));
    const port = await freePort();
    redis = await startRedis(port, dir);
    fixture = await startTangoFixture({ apiKeys: [KEY] });
    const config = `packs:\n  tango:\n    base_url: ${fixture.url}\nstore:\n  url: redis://127.0.0.1:${port}\n`;
    a = await startHttpServer({ config, packs: 'tango', env: { TANGO_API_KEY: KEY } });
    b = await startHttpServer({ config, packs: 'tango', env: { TANGO_API_KEY: KEY } });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await fixture?.close();
    await stopRedis(redis);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function call(server, args) {
    const { sessionId } = await initializeSession(server, LATEST);
    const res = await post(server, { jsonrpc: '2.0', id: 9, method: 'tools/call',
                                     params: { name: 'search_tango_contracts', arguments: args } },
                           { sessionId, protocolVersion: LATEST });
    return res.messages.find((m) => m.id === 9).result;
  }

  it('serves one cached result from either replica, and spaces their requests as one', async () => {
    fixture.reset();
    const first = await call(a, { query: 'cloud', limit: 2 });
    const second = await call(b, { query: 'cloud', limit: 2 });
    assert.equal(first.structuredContent.execution.cached, false);
    assert.equal(second.structuredContent.execution.cached, true);
    assert.deepEqual(second.structuredContent.data, first.structuredContent.data);
    assert.equal(fixture.stats().count, 1);

    // Different searches on both replicas at once: still 100 ms apart at Tango. The replicas
    // space the starts of their requests; the arrivals the fixture measures also differ by
    // connection set-up (a fresh connection against a pooled one), a few ms on a loaded
    // machine. Without the shared pacer they would arrive together.
    fixture.reset();
    await Promise.all([call(a, { query: 'help', limit: 1 }), call(b, { query: 'data', limit: 1 }),
                       call(a, { query: 'cyber', limit: 1 }), call(b, { query: 'migration', limit: 1 })]);
    const stats = fixture.stats();
    assert.equal(stats.count, 4);
    assert.ok(stats.min_gap_ms >= 50, `requests ${stats.min_gap_ms} ms apart`);
  });
});
