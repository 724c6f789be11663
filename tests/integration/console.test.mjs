// The operator console's JSON API on the real binary (docs/console.md): who may use it
// (loopback without auth, the server's own bearer tokens, OAuth tokens with the operator
// scope), the header fields of every answer, and bad input (unknown paths, wrong methods).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serverForTest, startHttpServer } from './lib/harness.mjs';
import { startAuthServer, makeKey } from './lib/auth_server.mjs';

const TOKEN = 'console-operator-token-5f2a91';
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const bearer = (token) => ({ Authorization: `Bearer ${token}` });

function assertConsoleHeaders(res, what) {
  assert.equal(res.headers.get('content-security-policy'), CSP, what);
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff', what);
  assert.equal(res.headers.get('referrer-policy'), 'no-referrer', what);
}

async function assertError(res, status, code, what) {
  const text = await res.text();
  assert.equal(res.status, status, `${what}: ${text}`);
  assert.equal(res.headers.get('content-type'), 'application/json', what);
  assertConsoleHeaders(res, what);
  const body = JSON.parse(text);
  assert.equal(body.error.code, code, what);
  assert.ok(body.error.message && body.error.suggestion, what);
  return body;
}

describe('console API: access', () => {
  it('without auth on loopback: served, the caller is nobody in particular', async (t) => {
    const server = await serverForTest(t);
    const res = await fetch(`${server.base}/console/api/me`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assertConsoleHeaders(res, 'me');
    assert.deepEqual(await res.json(), { principal: '', scopes: [], auth: 'none', trace_viewer_url: '' });
    // Host and Origin as for /mcp.
    await assertRpc403(await fetch(`${server.base}/console/api/me`, { headers: { Origin: 'https://evil.example' } }));
  });

  it('with bearer tokens: the server\'s own token is an operator; none or another is 401', async (t) => {
    const server = await serverForTest(t, {
      config: 'http:\n  bearer_tokens_env: CONSOLE_TOKENS\nconsole:\n  trace_viewer_url: https://traces.example/{trace_id}\n',
      env: { CONSOLE_TOKENS: TOKEN },
    });
    const anonymous = await fetch(`${server.base}/console/api/me`);
    await assertError(anonymous, 401, 'unauthorized', 'no token');
    assert.equal(anonymous.headers.get('www-authenticate'), 'Bearer realm="toolport"');
    const wrong = await fetch(`${server.base}/console/api/me`, { headers: bearer('not-the-token') });
    await assertError(wrong, 401, 'unauthorized', 'wrong token');
    assert.match(wrong.headers.get('www-authenticate'), /invalid_token/);
    const me = await fetch(`${server.base}/console/api/me`, { headers: bearer(TOKEN) });
    assert.equal(me.status, 200);
    const body = await me.json();
    assert.equal(body.auth, 'bearer');
    assert.match(body.principal, /^bearer:[0-9a-f]+$/);
    assert.ok(!JSON.stringify(body).includes(TOKEN), 'never the token');
    assert.equal(body.trace_viewer_url, 'https://traces.example/{trace_id}');
    // The page's files need no credential (the page asks for one): not built in here, 404.
    const page = await fetch(`${server.base}/console/`);
    assert.equal(page.status, 404);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assertConsoleHeaders(page, 'page');
  });

  it('bad input: unknown API paths 404, wrong methods 405, each a JSON error', async (t) => {
    const server = await serverForTest(t);
    const unknown = await assertError(await fetch(`${server.base}/console/api/mee`), 404, 'not_found', 'typo');
    assert.match(unknown.error.suggestion, /api\/me/);
    await assertError(await fetch(`${server.base}/console/api/`), 404, 'not_found', 'api/');
    const wrong = await fetch(`${server.base}/console/api/me`, { method: 'DELETE' });
    await assertError(wrong, 405, 'method_not_allowed', 'DELETE me');
    assert.equal(wrong.headers.get('allow'), 'GET');
    await assertError(await fetch(`${server.base}/console/`, { method: 'PUT', body: 'x' }), 405, 'method_not_allowed', 'PUT page');
  });

  it('console.enabled: false and console.path move or remove it', async (t) => {
    const off = await serverForTest(t, { config: 'console:\n  enabled: false\n' });
    assert.equal((await fetch(`${off.base}/console/api/me`)).status, 404);
    const moved = await serverForTest(t, { config: 'console:\n  path: /ops\n' });
    assert.equal((await fetch(`${moved.base}/ops/api/me`)).status, 200);
    assert.equal((await fetch(`${moved.base}/console/api/me`)).status, 404);
  });
});

async function assertRpc403(res) {
  assert.equal(res.status, 403);
  assert.match((await res.json()).error.message, /Origin/);
}

describe('console API: OAuth', () => {
  const env = {};
  before(async () => {
    env.as = await startAuthServer();
    env.as.keys = [makeKey('ec', 'key-1')];
    env.server = await startHttpServer({
      env: { CONSOLE_TOKENS: TOKEN },
      config: ['http:', '  bearer_tokens_env: CONSOLE_TOKENS', 'auth:', `  issuer: ${env.as.issuer}`, '  allow_http: true',
        '  required_scopes: [mcp:tools]', ''].join('\n'),
    });
    env.resource = `http://127.0.0.1:${env.server.port}/mcp`;
  });
  after(async () => {
    await env.server?.stop();
    await env.as?.stop();
  });

  it('a token without the operator scope is 403 insufficient_scope; with it, served', async () => {
    const { as, server, resource } = env;
    const user = as.token({ sub: 'alice', aud: resource, scope: 'mcp:tools' });
    const refused = await fetch(`${server.base}/console/api/me`, { headers: bearer(user) });
    const body = await assertError(refused, 403, 'insufficient_scope', 'end user');
    assert.match(body.error.message, /toolport:operator/);
    assert.match(refused.headers.get('www-authenticate'), /^Bearer error="insufficient_scope", /);
    assert.match(refused.headers.get('www-authenticate'), /scope="mcp:tools toolport:operator"/);
    assert.ok(!JSON.stringify(body).includes(user.slice(0, 20)), 'never the token');

    const operator = as.token({ sub: 'olga', aud: resource, scope: 'mcp:tools toolport:operator' });
    const me = await fetch(`${server.base}/console/api/me`, { headers: bearer(operator) });
    assert.equal(me.status, 200);
    const who = await me.json();
    assert.equal(who.auth, 'oauth');
    assert.match(who.principal, /^oauth:/);
    assert.deepEqual(who.scopes.sort(), ['mcp:tools', 'toolport:operator']);

    const forged = as.token({ sub: 'olga', aud: 'https://elsewhere.example/mcp', scope: 'toolport:operator' });
    const bad = await fetch(`${server.base}/console/api/me`, { headers: bearer(forged) });
    await assertError(bad, 401, 'unauthorized', 'wrong audience');
    assert.match(bad.headers.get('www-authenticate'), /invalid_token/);
    // The server's own token is an operator here too.
    assert.equal((await fetch(`${server.base}/console/api/me`, { headers: bearer(TOKEN) })).status, 200);
  });
});
