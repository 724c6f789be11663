// Bearer-token authentication: toolport started with a YAML config whose
// http.bearer_tokens_env names an environment variable holding the accepted tokens.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { startHttpServer, assertAlive, assertRpcError, post, request, sleep, INIT_PARAMS, LATEST } from './lib/harness.mjs';

const CONFIG = 'http:\n  bearer_tokens_env: TP_TOKENS\n';
const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT_PARAMS() };

describe('bearer authentication', () => {
  let server;

  before(async () => {
    server = await startHttpServer({ config: CONFIG, env: { TP_TOKENS: 'secret1,other2' } });
  });

  after(async () => {
    await server?.stop();
  });

  it('logs that auth is on', async () => {
    // The line is written just after the port opens, which is what startHttpServer waits
    // for; on a slow (sanitizer) build the test can look first.
    for (let waited = 0; waited < 5000 && !/bearer auth on/.test(server.logs()); waited += 20) await sleep(20);
    assert.match(server.logs(), /bearer auth on/);
  });

  it('no token: 401 with a Bearer challenge', async () => {
    const res = await post(server, initialize);
    assert.equal(res.status, 401, res.text);
    const challenge = res.headers.get('www-authenticate');
    assert.ok(challenge, 'WWW-Authenticate header present');
    assert.match(challenge, /^Bearer/);
    assertRpcError(res, -32600);
    assert.equal(res.headers.get('mcp-session-id'), null, 'no session for an unauthenticated client');
  });

  it('wrong token: 401', async () => {
    const res = await post(server, initialize, { headers: { Authorization: 'Bearer secret2' } });
    assert.equal(res.status, 401, res.text);
    assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
    // a prefix of the right token is still wrong
    const prefix = await post(server, initialize, { headers: { Authorization: 'Bearer secret' } });
    assert.equal(prefix.status, 401, prefix.text);
    // the right token under another scheme is wrong
    const basic = await post(server, initialize, { headers: { Authorization: 'Basic secret1' } });
    assert.equal(basic.status, 401, basic.text);
  });

  it('a session serves only the token that created it: another valid token gets 404', async () => {
    const created = await post(server, initialize, { headers: { Authorization: 'Bearer secret1' } });
    assert.equal(created.status, 200, created.text);
    const sessionId = created.headers.get('mcp-session-id');
    const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };
    const same = await post(server, ping, { sessionId, headers: { Authorization: 'Bearer secret1' } });
    assert.equal(same.status, 200, same.text);
    const other = await post(server, ping, { sessionId, headers: { Authorization: 'Bearer other2' } });
    assert.equal(other.status, 404, other.text);
    assertRpcError(other, -32600);
    const del = await request(server, 'DELETE', { headers: { 'Mcp-Session-Id': sessionId, Authorization: 'Bearer other2' } });
    assert.equal(del.status, 404, del.text);
    const still = await post(server, ping, { sessionId, headers: { Authorization: 'Bearer secret1' } });
    assert.equal(still.status, 200, still.text);
  });

  it('right token over raw HTTP: 200 (scheme name is case-insensitive)', async () => {
    const res = await post(server, initialize, { headers: { Authorization: 'Bearer secret1' } });
    assert.equal(res.status, 200, res.text);
    assert.ok(res.headers.get('mcp-session-id'));
    const lower = await post(server, initialize, { headers: { Authorization: 'bearer secret1' } });
    assert.equal(lower.status, 200, lower.text);
  });

  it('every endpoint is protected: GET/DELETE /mcp, GET /sse and POST /messages without a token get 401', async () => {
    const get = await request(server, 'GET', { headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': 'x', 'MCP-Protocol-Version': LATEST } });
    assert.equal(get.status, 401, get.text);
    const del = await request(server, 'DELETE', { headers: { 'Mcp-Session-Id': 'x' } });
    assert.equal(del.status, 401, del.text);
    const sse = await request(server, 'GET', { path: '/sse', headers: { Accept: 'text/event-stream' } });
    assert.equal(sse.status, 401, sse.text);
    const messages = await post(server, { jsonrpc: '2.0', id: 1, method: 'ping' }, { path: '/messages?sessionId=abc' });
    assert.equal(messages.status, 401, messages.text);
  });

  it('the SDK client without a token fails to connect', async () => {
    const client = new Client({ name: 'toolport-it-noauth', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(server.url));
    try {
      await assert.rejects(client.connect(transport), /401|Unauthorized/i);
    } finally {
      await client.close().catch(() => {});
    }
  });

  it('the SDK client with the right token (requestInit headers) works', async () => {
    const client = new Client({ name: 'toolport-it-auth', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { Authorization: 'Bearer secret1' } },
    });
    try {
      await client.connect(transport);
      assert.ok(transport.sessionId);
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'test_simple_text'));
      const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
      assert.deepEqual(result.content, [{ type: 'text', text: 'This is a simple text response for testing.' }]);
      await transport.terminateSession();
    } finally {
      await client.close().catch(() => {});
    }
  });

  it('the SDK legacy SSE client with the right token works', async () => {
    const headers = { Authorization: 'Bearer secret1' };
    const client = new Client({ name: 'toolport-it-auth-sse', version: '1.0.0' });
    // requestInit headers go on the GET /sse stream and on every POST /messages
    const transport = new SSEClientTransport(new URL(`${server.base}/sse`), { requestInit: { headers } });
    try {
      await client.connect(transport);
      const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
      assert.equal(result.content[0].text, 'This is a simple text response for testing.');
    } finally {
      await client.close().catch(() => {});
    }
  });

  it('is still alive', () => {
    assertAlive(server);
  });
});

describe('bearer authentication configuration', () => {
  it('refuses to start when the token variable is not set', async () => {
    await assert.rejects(startHttpServer({ config: CONFIG, env: { TP_TOKENS: '' } }), /TP_TOKENS/);
  });
});
