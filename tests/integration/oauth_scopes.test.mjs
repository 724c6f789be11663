// OAuth scopes per tool, source and profile (auth.profiles, tools.<name>.scopes,
// sources.<name>.scopes), tools/list filtered by the caller's token, the step-up 403
// (insufficient_scope naming every scope needed), opaque tokens checked by introspection
// (RFC 7662) and cached, and the official TypeScript SDK client authorizing against
// Toolport through the test authorization server (PRM, AS metadata, dynamic client
// registration, authorization code with PKCE) before it lists and calls tools.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { startHttpServer, assertAlive, post, openLegacySse, INIT_PARAMS } from './lib/harness.mjs';
import { startAuthServer, makeKey } from './lib/auth_server.mjs';

const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT_PARAMS() };
const RS_CLIENT = 'toolport-rs';
const RS_SECRET = 'rs-secret-9f3e';

// The resource server's config: every request needs mcp:tools; the conformance pack's tools
// need conf:read, test_simple_text needs tools:admin as well; the profile "small" needs
// profile:small. Opaque tokens are introspected with the resource server's own client.
function config(as) {
  return [
    'auth:',
    `  issuer: ${as.issuer}`,
    '  allow_http: true',
    '  scopes_supported: [mcp:tools, conf:read, tools:admin, profile:small]',
    '  required_scopes: [mcp:tools]',
    '  introspection:',
    `    endpoint: ${as.issuer}/introspect`,
    `    client_id: ${RS_CLIENT}`,
    '    client_secret_env: TP_INTROSPECTION_SECRET',
    '    negative_cache_s: 30',
    '  profiles:',
    '    small: {scopes: [profile:small]}',
    'gateway:',
    '  profiles:',
    '    small: {tools: ["test_simple_*"]}',
    'sources:',
    '  conformance: {scopes: [conf:read]}',
    'tools:',
    '  test_simple_text: {scopes: [tools:admin]}',
    '',
  ].join('\n');
}

// A JSON-RPC exchange on a fresh session with `token`; returns the last response.
async function session(server, token, messages, path = '/mcp') {
  const headers = { Authorization: `Bearer ${token}` };
  const init = await post(server, initialize, { headers, path });
  if (init.status !== 200) return init;
  const sessionId = init.headers.get('mcp-session-id');
  await post(server, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId, headers, path });
  let last = init;
  for (const m of messages) last = await post(server, m, { sessionId, headers, path });
  return last;
}

const listTools = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
const call = (name, args = {}) => ({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name, arguments: args } });
const names = (res) => res.json.result.tools.map((t) => t.name).sort();

describe('OAuth scopes, step-up and introspection', () => {
  let as, server, resource, metadataUrl;
  const issued = [];

  const jwt = (scope, sub = 'alice') => {
    const t = as.token({ sub, aud: resource, scope });
    issued.push(t);
    return t;
  };
  const opaque = (claims) => {
    const t = as.opaqueToken({ aud: resource, iss: as.issuer, ...claims });
    issued.push(t);
    return t;
  };

  before(async () => {
    as = await startAuthServer({ clients: { [RS_CLIENT]: RS_SECRET } });
    as.keys = [makeKey('ec', 'key-1')];
    server = await startHttpServer({ config: config(as), env: { TP_INTROSPECTION_SECRET: RS_SECRET } });
    resource = `http://127.0.0.1:${server.port}/mcp`;
    metadataUrl = `http://127.0.0.1:${server.port}/.well-known/oauth-protected-resource/mcp`;
  });

  after(async () => {
    await server?.stop();
    await as?.stop();
  });

  it('publishes every configured scope in the metadata', async () => {
    const res = await fetch(metadataUrl);
    assert.deepEqual((await res.json()).scopes_supported, ['mcp:tools', 'conf:read', 'tools:admin', 'profile:small']);
  });

  it('tools/list shows each token only the tools whose scopes it holds', async () => {
    const plain = await session(server, jwt('mcp:tools'), [listTools]);
    assert.equal(plain.status, 200, plain.text);
    assert.equal(names(plain).filter((n) => n.startsWith('test_')).length, 0, 'no conformance tool without conf:read');

    const reader = await session(server, jwt('mcp:tools conf:read'), [listTools]);
    const readerTools = names(reader);
    assert.ok(readerTools.includes('test_error_handling'), readerTools.join());
    assert.ok(!readerTools.includes('test_simple_text'), 'test_simple_text needs tools:admin too');

    const admin = await session(server, jwt('mcp:tools conf:read tools:admin'), [listTools]);
    const adminTools = names(admin);
    assert.ok(adminTools.includes('test_simple_text'));
    assert.equal(adminTools.length, readerTools.length + 1);
  });

  it('a call the token lacks the scopes for: 403 insufficient_scope naming all scopes needed; the stepped-up token succeeds', async () => {
    const headers = { Authorization: `Bearer ${jwt('mcp:tools conf:read')}` };
    const init = await post(server, initialize, { headers });
    const sessionId = init.headers.get('mcp-session-id');
    const refused = await post(server, call('test_simple_text'), { sessionId, headers });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(
      refused.headers.get('www-authenticate'),
      `Bearer error="insufficient_scope", resource_metadata="${metadataUrl}", scope="mcp:tools conf:read tools:admin"`,
    );
    assert.match(refused.json.error.message, /tools:admin/);
    assert.match(refused.json.error.message, /test_simple_text/);

    // The same user, a token with the scope asked for: same session, the call runs.
    const stepped = { Authorization: `Bearer ${jwt('mcp:tools conf:read tools:admin')}` };
    const ok = await post(server, call('test_simple_text'), { sessionId, headers: stepped });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.result.isError, undefined, ok.text);
    assert.match(JSON.stringify(ok.json.result.content), /simple text/i);

    // Without conf:read even the reading tools need a step-up, and the challenge keeps what
    // the token had (no scope is lost by asking for the new ones).
    const bare = await session(server, jwt('mcp:tools'), [call('test_error_handling')]);
    assert.equal(bare.status, 403, bare.text);
    assert.match(bare.headers.get('www-authenticate'), /scope="mcp:tools conf:read"$/);
    // An unknown tool is the session's answer, not a scope question.
    const unknown = await session(server, jwt('mcp:tools'), [call('no_such_tool')]);
    assert.equal(unknown.status, 200, unknown.text);
    assert.equal(unknown.json.error.code, -32602);
  });

  it('a batch with such a call is refused whole, and so is the call over legacy HTTP+SSE', async () => {
    const token = jwt('mcp:tools conf:read');
    const headers = { Authorization: `Bearer ${token}` };
    const init = await post(server, { ...initialize, params: INIT_PARAMS('2025-03-26') }, { headers, protocolVersion: '2025-03-26' });
    assert.equal(init.status, 200, init.text);
    const sessionId = init.headers.get('mcp-session-id');
    const batch = await post(server, [listTools, call('test_simple_text')], { sessionId, headers, protocolVersion: '2025-03-26' });
    assert.equal(batch.status, 403, batch.text);
    assert.match(batch.headers.get('www-authenticate'), /error="insufficient_scope".*scope="mcp:tools conf:read tools:admin"/);

    const sse = await openLegacySse(server, { headers });
    try {
      assert.equal(sse.status, 200);
      const legacy = await post(server, call('test_simple_text'), { path: sse.endpoint, headers });
      assert.equal(legacy.status, 403, legacy.text);
      assert.match(legacy.headers.get('www-authenticate'), /error="insufficient_scope"/);
      const allowed = await post(server, call('test_error_handling'), { path: sse.endpoint, headers });
      assert.equal(allowed.status, 202, allowed.text);
    } finally {
      sse.close();
    }
  });

  it('the stateless revision (2026-07-28): the same 403 before the call runs', async () => {
    const statelessCall = (token) =>
      post(
        server,
        { ...call('test_simple_text'), params: { name: 'test_simple_text', arguments: {}, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'it', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } } },
        { protocolVersion: '2026-07-28', headers: { Authorization: `Bearer ${token}`, 'Mcp-Method': 'tools/call', 'Mcp-Name': 'test_simple_text' } },
      );
    const refused = await statelessCall(jwt('mcp:tools conf:read'));
    assert.equal(refused.status, 403, refused.text);
    assert.match(refused.headers.get('www-authenticate'), /error="insufficient_scope".*scope="mcp:tools conf:read tools:admin"/);
    const ok = await statelessCall(jwt('mcp:tools conf:read tools:admin'));
    assert.equal(ok.status, 200, ok.text);
    assert.match(JSON.stringify(ok.json.result.content), /simple text/i);
  });

  it('a profile URL needs the profile\'s scopes before any JSON-RPC', async () => {
    const without = await post(server, initialize, { path: '/mcp/small', headers: { Authorization: `Bearer ${jwt('mcp:tools conf:read')}` } });
    assert.equal(without.status, 403, without.text);
    assert.equal(
      without.headers.get('www-authenticate'),
      `Bearer error="insufficient_scope", resource_metadata="${metadataUrl}", scope="mcp:tools conf:read profile:small"`,
    );
    assert.equal(without.headers.get('mcp-session-id'), null);
    const anonymous = await post(server, initialize, { path: '/mcp/small' });
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.headers.get('www-authenticate'), `Bearer resource_metadata="${metadataUrl}", scope="mcp:tools profile:small"`);

    const res = await session(server, jwt('mcp:tools conf:read profile:small'), [listTools], '/mcp/small');
    assert.equal(res.status, 200, res.text);
    assert.ok(names(res).every((n) => n.startsWith('test_simple_')), names(res).join());
    assert.ok(!names(res).includes('test_simple_text'), 'the profile still filters by tool scopes');
  });

  it('opaque tokens are introspected: active ones are served and cached, inactive ones refused and remembered', async () => {
    const before = as.introspections;
    const token = opaque({ sub: 'dave', scope: 'mcp:tools conf:read', exp: Math.floor(Date.now() / 1000) + 300 });
    const res = await session(server, token, [listTools, listTools]);
    assert.equal(res.status, 200, res.text);
    assert.ok(names(res).includes('test_error_handling'));
    assert.ok(!names(res).includes('test_simple_text'));
    assert.equal(as.introspections, before + 1, 'one introspection for four requests');

    const inactive = opaque({ sub: 'erin', scope: 'mcp:tools', active: false });
    for (let i = 0; i < 3; i++) {
      const r = await post(server, initialize, { headers: { Authorization: `Bearer ${inactive}` } });
      assert.equal(r.status, 401, r.text);
      assert.match(r.headers.get('www-authenticate'), /^Bearer error="invalid_token"/);
      assert.match(r.json.error.message, /inactive/);
    }
    assert.equal(as.introspections, before + 2, 'a refused token is asked about once');

    const elsewhere = opaque({ sub: 'erin', scope: 'mcp:tools', aud: 'https://other.example.com/mcp' });
    const wrongAudience = await post(server, initialize, { headers: { Authorization: `Bearer ${elsewhere}` } });
    assert.equal(wrongAudience.status, 401, wrongAudience.text);
    assert.match(wrongAudience.json.error.message, /wrong_audience/);

    const expired = opaque({ sub: 'erin', scope: 'mcp:tools', exp: Math.floor(Date.now() / 1000) - 600 });
    const late = await post(server, initialize, { headers: { Authorization: `Bearer ${expired}` } });
    assert.equal(late.status, 401, late.text);
    assert.match(late.json.error.message, /expired/);
    const foreign = opaque({ sub: 'erin', scope: 'mcp:tools', iss: 'https://evil.example.com' });
    const wrongIssuer = await post(server, initialize, { headers: { Authorization: `Bearer ${foreign}` } });
    assert.equal(wrongIssuer.status, 401, wrongIssuer.text);
    assert.match(wrongIssuer.json.error.message, /wrong_issuer/);

    // Concurrent first requests with one new token share one introspection.
    const fresh = opaque({ sub: 'frank', scope: 'mcp:tools', exp: Math.floor(Date.now() / 1000) + 300 });
    const n = as.introspections;
    const all = await Promise.all([1, 2, 3, 4].map(() => post(server, initialize, { headers: { Authorization: `Bearer ${fresh}` } })));
    for (const r of all) assert.equal(r.status, 200, r.text);
    assert.equal(as.introspections, n + 1);
  });

  it('JWTs are still verified locally beside introspection', async () => {
    const n = as.introspections;
    const res = await session(server, jwt('mcp:tools'), [listTools]);
    assert.equal(res.status, 200, res.text);
    assert.equal(as.introspections, n);
  });

  it('the official SDK client authorizes through the authorization server, then steps up for a tool', async () => {
    const provider = new TestOAuthProvider();
    const url = new URL(`${server.base}/mcp`);
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
    // 401 → PRM → AS metadata → registration → /authorize (redirected here with a code).
    await assert.rejects(new Client({ name: 'sdk-oauth', version: '1.0.0' }).connect(first), UnauthorizedError);
    assert.ok(provider.clientInfo?.client_id.startsWith('dyn-'), 'registered dynamically');
    assert.ok(provider.code, 'the authorization redirect carried a code');
    await first.finishAuth(provider.code);
    assert.ok(provider.saved?.access_token);

    const client = new Client({ name: 'sdk-oauth', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    const { tools } = await client.listTools();
    // The token has what the 401 asked for (mcp:tools): no conformance tool.
    assert.ok(!tools.some((t) => t.name.startsWith('test_')), tools.map((t) => t.name).join());
    const grant = as.authorizationRequests.at(-1);
    assert.equal(grant.scope, 'mcp:tools');
    assert.equal(grant.resource, resource, 'RFC 8707 resource indicator');

    // A tool it lacks the scopes for: 403 insufficient_scope, the SDK asks for them (a new
    // authorization, since refreshing cannot widen a grant), the test finishes it, and the
    // call goes through on the same session.
    const transport = client.transport;
    provider.code = undefined;
    await assert.rejects(client.callTool({ name: 'test_simple_text', arguments: {} }), UnauthorizedError);
    assert.deepEqual(as.authorizationRequests.at(-1).scope.split(' ').sort(), ['conf:read', 'mcp:tools', 'tools:admin']);
    await transport.finishAuth(provider.code);
    const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
    assert.equal(result.isError, undefined, JSON.stringify(result));
    assert.ok((await client.listTools()).tools.some((t) => t.name === 'test_simple_text'));
    await client.close();
  });

  it('the SDK client refreshes a refused access token with its refresh token (refresh_token grant)', async () => {
    const provider = new TestOAuthProvider({ keepRefreshTokens: true });
    const url = new URL(`${server.base}/mcp`);
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await assert.rejects(new Client({ name: 'sdk-refresh', version: '1.0.0' }).connect(first), UnauthorizedError);
    await first.finishAuth(provider.code);
    assert.ok(provider.saved.refresh_token, 'the code grant gave a refresh token');
    const refreshToken = provider.saved.refresh_token;
    // The stored access token is no longer good: Toolport answers 401, the SDK refreshes and retries.
    provider.saved = { ...provider.saved, access_token: as.token({ sub: 'alice', aud: resource, scope: 'mcp:tools' }, { lifetime: -600 }) };
    const client = new Client({ name: 'sdk-refresh', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    assert.ok(Array.isArray((await client.listTools()).tools));
    const refreshed = as.tokenRequests.filter((r) => r.grant_type === 'refresh_token');
    assert.equal(refreshed.length, 1);
    assert.notEqual(provider.saved.refresh_token, refreshToken, 'the refresh token was rotated');
    await client.close();
  });

  it('never logs a token', () => {
    assertAlive(server);
    const logs = server.logs();
    for (const t of [...issued, ...as.issuedTokens]) assert.ok(!logs.includes(t.split('.')[1] ?? t), 'a token was logged');
    assert.ok(!logs.includes(RS_SECRET));
  });
});

// An OAuthClientProvider (sdk/dist/esm/client/auth.js) for a client with no user to ask:
// the authorization server redirects straight back, so redirectToAuthorization fetches the
// URL and keeps the code from the Location. Refresh tokens are not kept unless asked: a
// step-up needs a new authorization (the SDK refreshes first, and a refresh grant cannot
// widen the scope).
class TestOAuthProvider {
  redirect = 'http://127.0.0.1:9/callback';
  constructor({ keepRefreshTokens = false } = {}) {
    this.keepRefreshTokens = keepRefreshTokens;
  }
  get redirectUrl() {
    return this.redirect;
  }
  get clientMetadata() {
    return { client_name: 'toolport-it', redirect_uris: [this.redirect], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() {
    return this.clientInfo;
  }
  saveClientInformation(info) {
    this.clientInfo = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens) {
    const { refresh_token: refresh, ...kept } = tokens;
    this.saved = this.keepRefreshTokens ? { ...kept, refresh_token: refresh } : kept;
  }
  saveCodeVerifier(v) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
  async redirectToAuthorization(url) {
    const res = await fetch(url, { redirect: 'manual' });
    assert.equal(res.status, 302, await res.text());
    const back = new URL(res.headers.get('location'));
    this.code = back.searchParams.get('code');
  }
}

describe('OAuth with every token introspected (token_format: opaque)', () => {
  let as;
  before(async () => {
    as = await startAuthServer({ clients: { [RS_CLIENT]: RS_SECRET } });
    as.keys = [makeKey('rsa', 'key-r')];
  });
  after(async () => {
    await as?.stop();
  });

  const opaqueConfig = (secret) =>
    [
      'auth:',
      `  issuer: ${as.issuer}`,
      '  allow_http: true',
      '  token_format: opaque',
      '  introspection:', // no endpoint: the metadata's introspection_endpoint
      `    client_id: ${RS_CLIENT}`,
      `    client_secret: ${secret}`,
      '    auth_method: client_secret_post',
      '',
    ].join('\n');

  it('a JWT is introspected too, the endpoint found in the metadata, and no JWKS is fetched', async () => {
    const server = await startHttpServer({ config: opaqueConfig(RS_SECRET) });
    try {
      const resource = `http://127.0.0.1:${server.port}/mcp`;
      const token = as.token({ sub: 'gina', aud: resource, scope: 'mcp:tools' });
      const res = await post(server, initialize, { headers: { Authorization: `Bearer ${token}` } });
      assert.equal(res.status, 200, res.text);
      assert.equal(as.introspections, 1);
      assert.equal(as.jwksFetches, 0);
      // A JWT whose signature the authorization server does not recognise: inactive.
      const forged = `${token.slice(0, token.lastIndexOf('.'))}.AAAA`;
      const refused = await post(server, initialize, { headers: { Authorization: `Bearer ${forged}` } });
      assert.equal(refused.status, 401, refused.text);
      assert.match(refused.json.error.message, /inactive/);
    } finally {
      await server.stop();
    }
  });

  it('an introspection endpoint that refuses Toolport\'s client: 503, not 401, and asked again next time', async () => {
    const server = await startHttpServer({ config: opaqueConfig('not-the-secret') });
    try {
      const token = as.opaqueToken({ sub: 'gina', aud: `http://127.0.0.1:${server.port}/mcp`, active: true });
      const before = as.introspectionAttempts;
      for (let i = 0; i < 2; i++) {
        const res = await post(server, initialize, { headers: { Authorization: `Bearer ${token}` } });
        assert.equal(res.status, 503, res.text);
        assert.equal(res.json.error.code, -32603);
      }
      // A failure of the endpoint is not the token's: not remembered, asked again.
      assert.equal(as.introspectionAttempts, before + 2);
      assert.ok(!server.logs().includes('not-the-secret'), 'the client secret is not logged');
    } finally {
      await server.stop();
    }
  });
});
