// Toolport as an OAuth 2.1 resource server (`auth:`): the authorization-server fixture of
// lib/auth_server.mjs (RFC 8414 metadata and a JWKS on loopback, tokens signed with
// node:crypto keys made at test start, a second key served later: rotation) and the real
// binary verifying the tokens it signs.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpServer, assertAlive, assertRpcError, post, request, openLegacySse, sleep, INIT_PARAMS } from './lib/harness.mjs';
import { b64url, makeKey, startAuthServer } from './lib/auth_server.mjs';

const FLOOR_MS = 1500; // auth.jwks_refetch_floor_ms below
const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT_PARAMS() };
const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };

describe('OAuth 2.1 resource server', () => {
  let as, server, resource, metadataUrl;
  const first = makeKey('ec', 'key-1');
  const rsa = makeKey('rsa', 'key-rsa');
  const rotated = makeKey('ec', 'key-2');
  const issued = []; // every token handed to the server: none may appear in its logs

  // A token for `sub` signed with `key`, with the given changes to its claims.
  function token(sub = 'alice', claims = {}, key = first) {
    const t = as.token({ aud: resource, sub, scope: 'mcp:tools openid', ...claims }, { key });
    issued.push(t);
    return t;
  }
  const bearer = (t) => ({ Authorization: `Bearer ${t}` });

  before(async () => {
    as = await startAuthServer();
    as.keys = [first, rsa];
    const config = [
      'http:',
      '  bearer_tokens_env: TP_TOKENS',
      'auth:',
      `  issuer: ${as.issuer}`,
      '  allow_http: true',
      '  scopes_supported: [mcp:tools, mcp:admin]',
      '  required_scopes: [mcp:tools]',
      '  clock_skew_s: 5',
      `  jwks_refetch_floor_ms: ${FLOOR_MS}`,
      '',
    ].join('\n');
    server = await startHttpServer({ config, env: { TP_TOKENS: 'static-secret-1' } });
    resource = `http://127.0.0.1:${server.port}/mcp`; // the default: listen address + path
    metadataUrl = `http://127.0.0.1:${server.port}/.well-known/oauth-protected-resource/mcp`;
  });

  after(async () => {
    await server?.stop();
    await as?.stop();
  });

  it('serves the Protected Resource Metadata without a token, at both well-known paths', async () => {
    for (const p of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const res = await request(server, 'GET', { path: p });
      assert.equal(res.status, 200, `${p}: ${res.text}`);
      assert.deepEqual(res.json, {
        resource,
        authorization_servers: [as.issuer],
        scopes_supported: ['mcp:tools', 'mcp:admin'],
        bearer_methods_supported: ['header'],
      });
    }
    const wrongMethod = await post(server, {}, { path: '/.well-known/oauth-protected-resource/mcp' });
    assert.equal(wrongMethod.status, 405);
  });

  it('no token: 401 pointing at the metadata and naming the required scope', async () => {
    const res = await post(server, initialize);
    assert.equal(res.status, 401, res.text);
    assert.equal(res.headers.get('www-authenticate'), `Bearer resource_metadata="${metadataUrl}", scope="mcp:tools"`);
    assertRpcError(res, -32600);
    for (const [method, p] of [['GET', '/mcp'], ['DELETE', '/mcp'], ['GET', '/sse'], ['GET', '/metrics']]) {
      const r = await request(server, method, { path: p, headers: { Accept: 'text/event-stream' } });
      assert.equal(r.status, 401, `${method} ${p}: ${r.text}`);
      assert.match(r.headers.get('www-authenticate'), /resource_metadata=/);
    }
    const legacy = await post(server, ping, { path: '/messages?sessionId=abc' });
    assert.equal(legacy.status, 401, legacy.text);
  });

  it('/health stays public', async () => {
    const res = await request(server, 'GET', { path: '/health' });
    assert.ok(res.status === 200 || res.status === 503, res.text);
  });

  it('a valid token: the official SDK client works (ES256 and RS256 keys)', async () => {
    for (const key of [first, rsa]) {
      const client = new Client({ name: 'oauth-test', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`), {
        requestInit: { headers: bearer(token('alice', {}, key)) },
      });
      await client.connect(transport);
      const { tools } = await client.listTools();
      assert.ok(tools.length > 0);
      await client.close();
    }
    // /metrics is the operator's: an end user's token is refused (operator_endpoints.test.mjs).
    const metrics = await request(server, 'GET', { path: '/metrics', headers: bearer(token()) });
    assert.equal(metrics.status, 403, metrics.text);
    // Legacy HTTP+SSE: the stream opens and names its POST endpoint.
    const sse = await openLegacySse(server, { headers: bearer(token()) });
    sse.close();
    assert.equal(sse.status, 200);
  });

  it('a static bearer token keeps working beside OAuth', async () => {
    const res = await post(server, initialize, { headers: bearer('static-secret-1') });
    assert.equal(res.status, 200, res.text);
    const wrong = await post(server, initialize, { headers: bearer('static-secret-2') });
    assert.equal(wrong.status, 401, wrong.text);
    assert.match(wrong.headers.get('www-authenticate'), /^Bearer error="invalid_token", resource_metadata="/);
  });

  async function refused(t, reason) {
    const res = await post(server, initialize, { headers: bearer(t) });
    assert.equal(res.status, 401, `${reason}: ${res.status} ${res.text}`);
    assert.equal(res.headers.get('www-authenticate'), `Bearer error="invalid_token", resource_metadata="${metadataUrl}", scope="mcp:tools"`);
    assertRpcError(res, -32600);
    assert.ok(res.json.error.message.includes(reason), `${reason} expected in: ${res.json.error.message}`);
    assert.ok(!res.text.includes(t.split('.')[1]), 'the token is not echoed');
    assert.equal(res.headers.get('mcp-session-id'), null);
  }

  it('refuses expired, wrong-audience, wrong-issuer, alg none, tampered and malformed tokens', async () => {
    const now = Math.floor(Date.now() / 1000);
    await refused(token('alice', { exp: now - 60, iat: now - 600 }), 'expired');
    await refused(token('alice', { nbf: now + 600 }), 'not_yet_valid');
    await refused(token('alice', { aud: 'https://other.example.com/mcp' }), 'wrong_audience');
    await refused(token('alice', { iss: 'https://evil.example.com' }), 'wrong_issuer');
    const good = token('alice');
    const [h, p] = good.split('.');
    const noneHeader = b64url(JSON.stringify({ alg: 'none', typ: 'JWT' }));
    const none = `${noneHeader}.${p}.${good.split('.')[2]}`;
    issued.push(none);
    await refused(none, 'unsupported_alg');
    // The unsecured form proper (an empty signature) is refused before its header is read.
    const unsecured = `${noneHeader}.${p}.`;
    issued.push(unsecured);
    await refused(unsecured, 'malformed');
    const payload = JSON.parse(Buffer.from(p, 'base64url'));
    const tampered = `${h}.${b64url(JSON.stringify({ ...payload, sub: 'mallory' }))}.${good.split('.')[2]}`;
    issued.push(tampered);
    await refused(tampered, 'bad_signature');
    await refused('not-a-jwt', 'malformed');
    // ES256 key, RS256 header: not the key's algorithm.
    await refused(token('alice', {}, { ...first, alg: 'RS256', privateKey: rsa.privateKey }), 'alg_key_mismatch');
  });

  it('a valid token without the required scope: 403 insufficient_scope', async () => {
    const res = await post(server, initialize, { headers: bearer(token('alice', { scope: 'openid' })) });
    assert.equal(res.status, 403, res.text);
    // The challenge names the token's scopes too: a client asking for exactly these loses none (MCP step-up).
    assert.equal(res.headers.get('www-authenticate'), `Bearer error="insufficient_scope", resource_metadata="${metadataUrl}", scope="openid mcp:tools"`);
    assert.match(res.json.error.message, /mcp:tools/);
    // The same token again (now from the verified cache): the same answer.
    const again = await post(server, initialize, { headers: bearer(issued.at(-1)) });
    assert.equal(again.status, 403, again.text);
  });

  it('sessions are bound to the user: another user gets 404, another token of the same user goes on', async () => {
    const created = await post(server, initialize, { headers: bearer(token('alice')) });
    assert.equal(created.status, 200, created.text);
    const sessionId = created.headers.get('mcp-session-id');
    assert.ok(sessionId);
    const same = await post(server, ping, { sessionId, headers: bearer(token('alice')) });
    assert.equal(same.status, 200, same.text);
    const bob = await post(server, ping, { sessionId, headers: bearer(token('bob')) });
    assert.equal(bob.status, 404, bob.text);
    const staticToken = await post(server, ping, { sessionId, headers: bearer('static-secret-1') });
    assert.equal(staticToken.status, 404, staticToken.text);
    const del = await request(server, 'DELETE', { headers: { ...bearer(token('bob')), 'Mcp-Session-Id': sessionId } });
    assert.equal(del.status, 404, del.text);
    const mine = await request(server, 'DELETE', { headers: { ...bearer(token('alice')), 'Mcp-Session-Id': sessionId } });
    assert.equal(mine.status, 200, mine.text);
  });

  it('an unknown kid is refused until the authorization server publishes it, re-fetched no sooner than the floor', async () => {
    await sleep(FLOOR_MS + 200); // past the floor of the last fetch
    const before = as.jwksFetches;
    const t = token('carol', {}, rotated);
    await refused(t, 'unknown_kid'); // the set is fetched again and still lacks key-2
    assert.equal(as.jwksFetches, before + 1);
    as.keys = [first, rotated]; // the authorization server rotates
    await refused(t, 'unknown_kid'); // within the floor: not fetched again
    assert.equal(as.jwksFetches, before + 1);
    await sleep(FLOOR_MS + 200);
    const res = await post(server, initialize, { headers: bearer(t) });
    assert.equal(res.status, 200, res.text);
    assert.equal(as.jwksFetches, before + 2);
    // The retired key's tokens are refused once the set no longer has it (after the floor).
    await sleep(FLOOR_MS + 200);
    await refused(token('alice', {}, rsa), 'unknown_kid');
  });

  it('never logs a token', async () => {
    assertAlive(server);
    const logs = server.logs();
    for (const t of issued) assert.ok(!logs.includes(t.split('.')[1] ?? t), 'a token was logged');
    assert.ok(!logs.includes('static-secret-1'));
  });
});

describe('OAuth with its authorization server away', () => {
  it('answers 503 (not 401) while no key set can be fetched', async () => {
    const as = await startAuthServer();
    const issuer = as.issuer;
    await as.stop();
    const config = `auth:\n  issuer: ${issuer}\n  allow_http: true\n`;
    const server = await startHttpServer({ config });
    try {
      const res = await post(server, initialize, { headers: { Authorization: 'Bearer a.b.c' } });
      assert.equal(res.status, 503, res.text);
      assertRpcError(res, -32603);
      const prm = await request(server, 'GET', { path: '/.well-known/oauth-protected-resource' });
      assert.equal(prm.status, 200, prm.text);
      assert.equal(prm.json.scopes_supported, undefined);
    } finally {
      await server.stop();
    }
  });
});
