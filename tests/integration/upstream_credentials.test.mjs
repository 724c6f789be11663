// Per-user upstream credentials (issue 15): Toolport verifies its callers' OAuth tokens and
// reaches the services behind it with tokens of their own, from the authorization-server
// fixture of lib/auth_server.mjs:
//  - a gateway upstream (the official TypeScript SDK's Streamable HTTP server, which accepts
//    only tokens the fixture signed for its audience and tells which token each call came
//    with) behind `auth: {type: token_exchange}`: two users reach it with two different
//    exchanged tokens, never their own; a user's second call reuses the cached exchange; a
//    token the upstream refuses (401) is exchanged anew; a caller without an OAuth token
//    and a refused exchange are tool errors with machine-readable codes;
//  - a REST catalog behind `auth: {type: client_credentials}`: listing and calls carry
//    Toolport's own token, obtained once;
//  - an OpenAPI source behind `auth: {type: token_exchange}`: each user's calls carry a token
//    exchanged for that user, for the API's audience.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpServer, assertAlive, waitFor } from './lib/harness.mjs';
import { makeKey, startAuthServer, claimsOf, verified } from './lib/auth_server.mjs';
import { text, code } from './lib/gateway_setup.mjs';
import { bearerOf, startProtectedUpstream } from './lib/protected_upstream.mjs';

const UPSTREAM_AUDIENCE = 'https://files.example.test';
const REST_AUDIENCE = 'https://rest.example.test';
const OPENAPI_AUDIENCE = 'https://openapi.example.test';
const CLIENT_SECRET = 'toolport-client-secret-1';

// A REST tool catalog (GET /tools, POST /tools/<name>) that wants a token for REST_AUDIENCE.
async function startRestApi(as) {
  const api = { seen: [] };
  api.server = http.createServer(async (req, res) => {
    for await (const _ of req);
    const token = bearerOf(req.headers.authorization);
    api.seen.push({ method: req.method, path: req.url, token });
    const claims = token && verified(token, as.keys);
    res.setHeader('Content-Type', 'application/json');
    if (!claims || claims.aud !== REST_AUDIENCE) return res.writeHead(401).end(JSON.stringify({ error: 'unauthorized' }));
    if (req.method === 'GET' && req.url === '/tools') {
      return res.end(JSON.stringify({ tools: [{ name: 'rest_whoami', description: 'Tells which client called', parameters: { type: 'object', properties: {} } }] }));
    }
    if (req.method === 'POST' && req.url === '/tools/rest_whoami') return res.end(JSON.stringify({ caller: claims.sub }));
    res.writeHead(404).end('{}');
  });
  await new Promise((resolve) => api.server.listen(0, '127.0.0.1', resolve));
  api.url = `http://127.0.0.1:${api.server.address().port}`;
  api.stop = () => new Promise((resolve) => api.server.close(resolve));
  return api;
}

// An API described by an OpenAPI document (GET /whoami) that wants a token for
// OPENAPI_AUDIENCE and answers with the user it was issued for.
async function startOpenApi(as) {
  const api = { tokens: [] };
  api.server = http.createServer(async (req, res) => {
    for await (const _ of req);
    const token = bearerOf(req.headers.authorization);
    api.tokens.push(token);
    const claims = token && verified(token, as.keys);
    res.setHeader('Content-Type', 'application/json');
    if (!claims || claims.aud !== OPENAPI_AUDIENCE) return res.writeHead(401).end(JSON.stringify({ error: 'unauthorized' }));
    if (req.url === '/whoami') return res.end(JSON.stringify({ sub: claims.sub }));
    res.writeHead(404).end('{}');
  });
  await new Promise((resolve) => api.server.listen(0, '127.0.0.1', resolve));
  api.url = `http://127.0.0.1:${api.server.address().port}`;
  api.dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-it-openapi-auth-'));
  api.document = path.join(api.dir, 'api.json');
  writeFileSync(
    api.document,
    JSON.stringify({
      openapi: '3.0.3',
      info: { title: 'whoami', version: '1' },
      paths: {
        '/whoami': {
          get: {
            operationId: 'api_whoami',
            summary: 'Tells which user called',
            responses: { 200: { description: 'the user', content: { 'application/json': { schema: { type: 'object', properties: { sub: { type: 'string' } } } } } } },
          },
        },
      },
    }),
  );
  api.stop = async () => {
    await new Promise((resolve) => api.server.close(resolve));
    rmSync(api.dir, { recursive: true, force: true });
  };
  return api;
}

describe('upstream credentials: token exchange for a gateway upstream and an OpenAPI source, client_credentials for a REST catalog', () => {
  let as, upstream, api, openapi, server, resource;
  const key = makeKey('ec', 'as-key-1');
  const callerTokens = [];
  const clients = [];

  // A Toolport access token of `sub`, as the authorization server would issue it.
  function userToken(sub) {
    const t = as.token({ sub, aud: resource, scope: 'mcp:tools' });
    callerTokens.push(t);
    return t;
  }

  async function connectAs(token) {
    const client = new Client({ name: 'upstream-credentials-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    clients.push(client);
    return client;
  }

  // The token the upstream saw for one whoami call through `client`.
  async function upstreamTokenOf(client) {
    const result = await client.callTool({ name: 'whoami', arguments: {} });
    assert.equal(code(result), 'OK', text(result));
    return JSON.parse(text(result)).token;
  }

  before(async () => {
    as = await startAuthServer({ clients: { toolport: CLIENT_SECRET } });
    as.keys = [key];
    // whoami_cached: the same tool, for a test with the pipeline's cache on.
    upstream = await startProtectedUpstream(as, { audience: UPSTREAM_AUDIENCE, tools: ['whoami', 'whoami_cached'] });
    api = await startRestApi(as);
    openapi = await startOpenApi(as);
    const config = `
http:
  bearer_tokens_env: TP_STATIC
auth:
  issuer: ${as.issuer}
  allow_http: true
upstreams:
  files:
    url: ${upstream.url}
    auth:
      type: token_exchange
      issuer: ${as.issuer}
      allow_http: true
      client_id: toolport
      client_secret: \${TP_CLIENT_SECRET}
      audience: ${UPSTREAM_AUDIENCE}
      scope: files:read
rest:
  restapi:
    base_url: ${api.url}
    list: {url: /tools, tools_path: tools}
    execute: {url: "/tools/{name}"}
    auth:
      type: client_credentials
      token_endpoint: ${as.issuer}/token
      allow_http: true
      client_id: toolport
      client_secret: \${TP_CLIENT_SECRET}
      auth_method: client_secret_post
      audience: ${REST_AUDIENCE}
openapi:
  whoami:
    document: ${openapi.document}
    base_url: ${openapi.url}
    auth:
      type: token_exchange
      token_endpoint: ${as.issuer}/token
      allow_http: true
      client_id: toolport
      client_secret: \${TP_CLIENT_SECRET}
      audience: ${OPENAPI_AUDIENCE}
      own_requests: none
pipeline:
  cache: {enabled: false}
tools:
  whoami_cached: {cache: {enabled: true, ttl_s: 300}}
`;
    server = await startHttpServer({ packs: '', config, env: { TP_CLIENT_SECRET: CLIENT_SECRET, TP_STATIC: 'static-caller-token' } });
    resource = `http://127.0.0.1:${server.port}/mcp`;
    const client = await connectAs(userToken('alice'));
    await waitFor('the upstream and the catalog', async () => {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      return ['whoami', 'rest_whoami', 'api_whoami'].every((n) => names.includes(n)) ? names : null;
    });
  });

  after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await server?.stop();
    await upstream?.stop();
    await api?.stop();
    await openapi?.stop();
    await as?.stop();
  });

  it('the gateway lists the upstream as itself: a client_credentials token for the upstream', () => {
    const own = upstream.seen.filter(Boolean).map(claimsOf).filter((c) => c.sub === 'toolport');
    assert.ok(own.length > 0, 'the listing came with Toolport\'s own token');
    assert.ok(own.every((c) => c.aud === UPSTREAM_AUDIENCE));
    assert.ok(as.tokenRequests.some((r) => r.grant_type === 'client_credentials' && r.client === 'toolport' && r.audience === UPSTREAM_AUDIENCE));
  });

  it('two users reach the upstream with two different exchanged tokens, never their own', async () => {
    const exchangesBefore = as.exchanges;
    const alice = await connectAs(userToken('alice'));
    const bob = await connectAs(userToken('bob'));
    const aliceUpstream = await upstreamTokenOf(alice);
    const bobUpstream = await upstreamTokenOf(bob);
    assert.ok(aliceUpstream && bobUpstream);
    assert.notEqual(aliceUpstream, bobUpstream);
    assert.equal(as.exchanges, exchangesBefore + 2);
    for (const [token, sub] of [[aliceUpstream, 'alice'], [bobUpstream, 'bob']]) {
      assert.ok(as.issuedTokens.includes(token), 'a token the authorization server issued');
      const claims = claimsOf(token);
      assert.equal(claims.sub, sub);
      assert.equal(claims.aud, UPSTREAM_AUDIENCE);
      assert.deepEqual(claims.act, { sub: 'toolport' });
      assert.equal(claims.scope, 'files:read');
    }
    const exchanges = as.tokenRequests.filter((r) => r.grant_type === 'urn:ietf:params:oauth:grant-type:token-exchange');
    assert.deepEqual(exchanges.slice(-2).map((r) => r.subject).sort(), ['alice', 'bob']);
    // The callers' own tokens never reached the upstream.
    for (const t of callerTokens) assert.ok(!upstream.seen.some((h) => h.includes(t)), 'a caller token was forwarded');

    // Again: the cached exchanged tokens, no new exchange.
    assert.equal(await upstreamTokenOf(alice), aliceUpstream);
    assert.equal(await upstreamTokenOf(bob), bobUpstream);
    assert.equal(as.exchanges, exchangesBefore + 2);
  });

  it('with the cache on, one user\'s answer is never served to another', async () => {
    const frank = await connectAs(userToken('frank'));
    const grace = await connectAs(userToken('grace'));
    const call = async (client) => {
      const result = await client.callTool({ name: 'whoami_cached', arguments: {} });
      assert.equal(code(result), 'OK', text(result));
      return claimsOf(JSON.parse(text(result)).token).sub;
    };
    assert.equal(await call(frank), 'frank');
    assert.equal(await call(grace), 'grace');
    // frank's answer again, from the cache: the upstream is not asked (the cache is on).
    const requests = upstream.seen.length;
    assert.equal(await call(frank), 'frank');
    assert.equal(upstream.seen.length, requests, 'the second call of frank reached the upstream');
  });

  it('a token the upstream refuses (401) is dropped and exchanged anew, once', async () => {
    const alice = await connectAs(userToken('alice-2'));
    const first = await upstreamTokenOf(alice);
    const exchangesBefore = as.exchanges;
    const refusalsBefore = upstream.refusals;
    upstream.revoked.add(first);
    const second = await upstreamTokenOf(alice);
    assert.notEqual(second, first);
    assert.equal(claimsOf(second).sub, 'alice-2');
    assert.equal(as.exchanges, exchangesBefore + 1);
    assert.ok(upstream.refusals > refusalsBefore);
  });

  it('a user the upstream refuses every token of gets UPSTREAM_AUTHORIZATION_FAILED after one new exchange', async () => {
    upstream.refusedUsers.add('heidi');
    const heidi = await connectAs(userToken('heidi'));
    const exchangesBefore = as.exchanges;
    const result = await heidi.callTool({ name: 'whoami', arguments: {} });
    assert.equal(result.isError, true);
    assert.equal(code(result), 'UPSTREAM_AUTHORIZATION_FAILED', text(result));
    // Its first token, then one more: not a loop.
    assert.equal(as.exchanges, exchangesBefore + 2);
  });

  it('a caller without an OAuth token (a static bearer token) gets UPSTREAM_CREDENTIALS_UNAVAILABLE', async () => {
    const exchangesBefore = as.exchanges;
    const client = await connectAs('static-caller-token');
    const result = await client.callTool({ name: 'whoami', arguments: {} });
    assert.equal(result.isError, true);
    assert.equal(code(result), 'UPSTREAM_CREDENTIALS_UNAVAILABLE', text(result));
    assert.match(result.structuredContent.suggestion, /OAuth access token/);
    assert.equal(as.exchanges, exchangesBefore);
    // Other sources still serve it (the REST catalog does not need the caller's token).
    const rest = await client.callTool({ name: 'rest_whoami', arguments: {} });
    assert.equal(code(rest), 'OK', text(rest));
  });

  it('a refused exchange is UPSTREAM_AUTHORIZATION_FAILED with the authorization server\'s error code', async () => {
    const client = await connectAs(userToken('carol'));
    as.refuse = { status: 400, error: 'invalid_grant', error_description: 'carol may not use files' };
    try {
      const result = await client.callTool({ name: 'whoami', arguments: {} });
      assert.equal(result.isError, true);
      assert.equal(code(result), 'UPSTREAM_AUTHORIZATION_FAILED', text(result));
      assert.equal(result.structuredContent.authorization_server_error, 'invalid_grant');
      assert.match(text(result), /carol may not use files/);
    } finally {
      as.refuse = null;
    }
    // Not cached: once the server agrees, the call goes through.
    assert.equal(claimsOf(await upstreamTokenOf(client)).sub, 'carol');
  });

  it('the REST catalog is listed and called with one client_credentials token', async () => {
    const client = clients[0];
    const result = await client.callTool({ name: 'rest_whoami', arguments: {} });
    assert.equal(code(result), 'OK', text(result));
    assert.match(text(result), /toolport/);
    const tokens = new Set(api.seen.map((r) => r.token));
    assert.equal(tokens.size, 1, 'one token for the listing and every call');
    const [token] = tokens;
    assert.equal(claimsOf(token).aud, REST_AUDIENCE);
    assert.equal(claimsOf(token).sub, 'toolport');
    assert.ok(api.seen.some((r) => r.path === '/tools') && api.seen.some((r) => r.path === '/tools/rest_whoami'));
    const grants = as.tokenRequests.filter((r) => r.grant_type === 'client_credentials' && r.audience === REST_AUDIENCE);
    assert.equal(grants.length, 1);
  });

  it('an OpenAPI source calls the API with each user\'s own exchanged token', async () => {
    const exchangesBefore = as.exchanges;
    const dave = await connectAs(userToken('dave'));
    const erin = await connectAs(userToken('erin'));
    for (const [client, sub] of [[dave, 'dave'], [erin, 'erin'], [dave, 'dave']]) {
      const result = await client.callTool({ name: 'api_whoami', arguments: {} });
      assert.equal(code(result), 'OK', text(result));
      assert.equal(JSON.parse(text(result)).sub, sub);
    }
    assert.equal(as.exchanges, exchangesBefore + 2, 'one exchange per user, the second call of dave from the cache');
    const seen = openapi.tokens.slice(-3);
    assert.notEqual(seen[0], seen[1]);
    assert.equal(seen[0], seen[2]);
    for (const t of seen) {
      assert.ok(!callerTokens.includes(t), 'a caller token was forwarded');
      assert.equal(claimsOf(t).aud, OPENAPI_AUDIENCE);
    }
    // Without an OAuth token there is nothing to exchange.
    const anonymous = await connectAs('static-caller-token');
    const refused = await anonymous.callTool({ name: 'api_whoami', arguments: {} });
    assert.equal(code(refused), 'UPSTREAM_CREDENTIALS_UNAVAILABLE', text(refused));
  });

  it('never logs a token or the client secret', () => {
    assertAlive(server);
    const logs = server.logs();
    for (const t of [...callerTokens, ...as.issuedTokens]) assert.ok(!logs.includes(t.split('.')[1]), 'a token was logged');
    assert.ok(!logs.includes(CLIENT_SECRET), 'the client secret was logged');
  });
});
