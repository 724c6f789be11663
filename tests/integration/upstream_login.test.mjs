// A gateway upstream behind `auth: {type: login}`: an MCP server (the official TypeScript
// SDK's Streamable HTTP server) that wants a user's OAuth token from the authorization-server
// fixture of lib/auth_server.mjs. The operator runs `toolport login <upstream URL>` once (the
// real browser flow: BROWSER is curl, which follows the fixture's redirect back to the
// loopback listener); `toolport serve`, with the same XDG_CONFIG_HOME, uses those tokens,
// refreshes them (on a 401, and before they expire) and writes the new ones back to the
// store, and never starts an authorization of its own: without a usable token the upstream is
// unavailable in /health and its calls are UPSTREAM_AUTHORIZATION_FAILED naming
// `toolport login`, until a new login, which it picks up without a restart. Last, a login
// whose browser command fails ends at once with that failure.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpServer, assertAlive, waitFor, runToolport } from './lib/harness.mjs';
import { makeKey, startAuthServer, claimsOf } from './lib/auth_server.mjs';
import { text, code } from './lib/gateway_setup.mjs';
import { startProtectedUpstream } from './lib/protected_upstream.mjs';

describe('gateway upstream authorized with the tokens of toolport login', () => {
  let as;
  let upstream;
  let server;
  let client;
  let xdg;
  const key = makeKey('ec', 'login-key-1');

  const storeFile = () => path.join(xdg, 'toolport', 'oauth-tokens.json');
  // The tokens kept for the upstream (the store is keyed by the server's canonical URL).
  const storedTokens = () => {
    const store = JSON.parse(readFileSync(storeFile(), 'utf8'));
    const entry = Object.entries(store.servers ?? store).find(([k]) => k.startsWith(upstream.origin))?.[1];
    return entry?.tokens;
  };
  const login = () =>
    runToolport(['login', upstream.url], { env: { XDG_CONFIG_HOME: xdg, BROWSER: 'curl -fsS -L -o /dev/null' }, timeoutMs: 30000 });
  const health = async () => (await fetch(server.url.replace(/\/mcp$/, '/health'))).text();
  const whoami = () => client.callTool({ name: 'whoami', arguments: {} });

  before(async () => {
    as = await startAuthServer();
    as.keys = [key];
    // Its protected resource metadata names the fixture; it wants tokens for its own URL.
    upstream = await startProtectedUpstream(as, { metadata: true });
    xdg = mkdtempSync(path.join(os.tmpdir(), 'toolport-it-login-'));
    const config = `
upstreams:
  files:
    url: ${upstream.url}
    auth: {type: login}
    restart_delay_ms: 100
    max_backoff_ms: 300
pipeline:
  cache: {enabled: false}
`;
    server = await startHttpServer({ packs: '', config, env: { XDG_CONFIG_HOME: xdg, BROWSER: 'false' } });
    client = new Client({ name: 'upstream-login-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  });

  after(async () => {
    await client?.close().catch(() => {});
    await server?.stop();
    await upstream?.stop();
    await as?.stop();
    if (xdg) rmSync(xdg, { recursive: true, force: true });
  });

  it('never logged in: the upstream is unavailable in /health, naming toolport login, and no authorization is started', async () => {
    const body = await waitFor('the upstream reported unavailable', async () => {
      const h = await health();
      return /toolport login/.test(h) ? h : null;
    });
    assert.match(body, /files/);
    assert.doesNotMatch(body, /connected \(/);
    assert.equal(as.authorizationRequests.length, 0, 'the gateway never sends anyone to /authorize');
    assert.equal(as.registrations, 0);
    assert.equal(existsSync(storeFile()), false);
    const { tools } = await client.listTools();
    assert.ok(!tools.some((t) => t.name === 'whoami'));
    assertAlive(server);
  });

  it('after toolport login (the real browser flow) the gateway connects without a restart and calls carry the logged-in token', async () => {
    const done = await login();
    assert.equal(done.status, 0, done.stderr);
    assert.equal(as.authorizationRequests.length, 1);
    const loggedIn = storedTokens();
    assert.ok(loggedIn?.access_token && loggedIn?.refresh_token, 'login kept an access and a refresh token');
    await waitFor('the upstream connected', async () => ((await client.listTools()).tools.some((t) => t.name === 'whoami') ? true : null));
    assert.match(await health(), /connected \(/);
    const result = await whoami();
    assert.equal(code(result), 'OK', text(result));
    const token = JSON.parse(text(result)).token;
    assert.equal(token, loggedIn.access_token);
    assert.equal(claimsOf(token).sub, 'alice');
    assert.equal(as.authorizationRequests.length, 1, 'the gateway started no authorization');
  });

  it('a refused token is refreshed, and a short-lived one before use; the store gets the new tokens', async () => {
    as.expiresIn = 2; // what the refresh issues now lives 2 s (under the 30 s margin)
    const before = storedTokens();
    upstream.revoked.add(before.access_token);
    const refreshesBefore = as.tokenRequests.filter((r) => r.grant_type === 'refresh_token').length;
    let result = await whoami();
    assert.equal(code(result), 'OK', text(result));
    const refreshed = JSON.parse(text(result)).token;
    assert.notEqual(refreshed, before.access_token);
    let stored = storedTokens();
    assert.equal(stored.access_token, refreshed, 'the refreshed token was written back to the store');
    assert.notEqual(stored.refresh_token, before.refresh_token, 'with the rotated refresh token');
    // The next call: the token is about to expire, so it is refreshed before it is sent.
    const refusals = upstream.refusals;
    result = await whoami();
    assert.equal(code(result), 'OK', text(result));
    const next = JSON.parse(text(result)).token;
    assert.notEqual(next, refreshed);
    assert.equal(upstream.refusals, refusals, 'refreshed before use, not after a refusal');
    stored = storedTokens();
    assert.equal(stored.access_token, next);
    assert.ok(as.tokenRequests.filter((r) => r.grant_type === 'refresh_token').length >= refreshesBefore + 2);
    assert.equal(as.authorizationRequests.length, 1);
  });

  it('a refresh refused is UPSTREAM_AUTHORIZATION_FAILED naming toolport login; the next call after a login works', async () => {
    as.refuse = { status: 400, error: 'invalid_grant', error_description: 'the refresh token was revoked' };
    upstream.revoked.add(storedTokens().access_token);
    const result = await whoami();
    assert.equal(code(result), 'UPSTREAM_AUTHORIZATION_FAILED', JSON.stringify(result));
    assert.match(JSON.stringify(result), new RegExp(`run: toolport login ${upstream.url.replace(/[.]/g, '\\.')}`));
    assert.equal(as.authorizationRequests.length, 1, 'still no authorization started by the gateway');
    assertAlive(server);

    as.refuse = null;
    as.expiresIn = 3600;
    // Logged out first: the fixture accepts only the exact redirect URI a client registered,
    // and the new login's loopback listener has another port than the kept registration's.
    const out = await runToolport(['logout', upstream.url], { env: { XDG_CONFIG_HOME: xdg } });
    assert.equal(out.status, 0, out.stderr);
    const done = await login();
    assert.equal(done.status, 0, done.stderr);
    const fresh = storedTokens().access_token;
    const again = await whoami();
    assert.equal(code(again), 'OK', text(again));
    assert.equal(JSON.parse(text(again)).token, fresh, 'the new login was picked up without a restart');
    assertAlive(server);
  });

  it('toolport login stops at once when the browser command fails, instead of waiting for --login-timeout', async () => {
    const start = Date.now();
    const done = await runToolport(['login', upstream.url, '--login-timeout', '60'], {
      env: { XDG_CONFIG_HOME: xdg, BROWSER: "sh -c 'exit 3'" },
      timeoutMs: 30000,
    });
    assert.equal(done.status, 1, done.stderr);
    assert.match(done.stderr, /the browser command failed \(sh exited with status 3\)/);
    assert.ok(Date.now() - start < 15000, `took ${Date.now() - start} ms`);
  });
});
