// Host and Origin on the wire (node:net, so the test writes the header fields itself): a
// Host or Origin that only starts like a loopback literal (`[::1].evil.com`) is no loopback
// name (403); an empty Host and a repeated Host are 400 (RFC 9112 §3.2), on the MCP
// endpoint and on the legacy SSE ones; the plain loopback forms still pass.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startHttpServer, rawExchange, assertAlive } from './lib/harness.mjs';

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

// One request written field by field; `fields` are [name, value] pairs, in order.
function raw(server, { method = 'POST', path = '/mcp', fields, body = method === 'POST' ? INIT : '' }) {
  const head = [`${method} ${path} HTTP/1.1`, ...fields.map(([n, v]) => `${n}: ${v}`)];
  if (method === 'POST') {
    head.push('Content-Type: application/json', 'Accept: application/json, text/event-stream');
    head.push(`Content-Length: ${Buffer.byteLength(body)}`);
  }
  head.push('Connection: close');
  return rawExchange(server.port, (sock) => sock.write(`${head.join('\r\n')}\r\n\r\n${body}`));
}

describe('Host and Origin checks on the wire', () => {
  let server, host;
  before(async () => {
    server = await startHttpServer();
    host = `127.0.0.1:${server.port}`;
  });
  after(async () => {
    await server?.stop();
  });

  // The legacy GET /sse answers with a stream that stays open: only its status line matters.
  const targets = [
    { method: 'POST', path: '/mcp' },
    { method: 'GET', path: '/sse' },
    { method: 'POST', path: '/messages?sessionId=none' },
  ];

  for (const { method, path } of targets) {
    it(`${method} ${path}: [::1].evil.com as Host or Origin is 403, an empty or repeated Host 400`, async () => {
      const cases = [
        { what: 'Host: [::1].evil.com', fields: [['Host', '[::1].evil.com']], status: 403 },
        { what: 'Host: [::1].evil.com:PORT', fields: [['Host', `[::1].evil.com:${server.port}`]], status: 403 },
        { what: 'Origin: http://[::1].evil.com', fields: [['Host', host], ['Origin', 'http://[::1].evil.com']], status: 403 },
        { what: 'Origin: http://localhost@evil.com', fields: [['Host', host], ['Origin', 'http://localhost@evil.com']], status: 403 },
        { what: 'an empty Host', fields: [['Host', '']], status: 400 },
        { what: 'two Host fields', fields: [['Host', host], ['Host', 'evil.example']], status: 400 },
        { what: 'the same Host twice', fields: [['Host', host], ['Host', host]], status: 400 },
      ];
      for (const c of cases) {
        const res = await raw(server, { method, path, fields: c.fields });
        assert.equal(res.status, c.status, `${c.what}: ${res.raw.slice(0, 300)}`);
        if (c.status !== 200) assert.match(res.body, /"code":-32600/, `${c.what}: a JSON-RPC error body`);
      }
      assertAlive(server);
    });
  }

  it('the loopback forms still pass: 127.0.0.1, localhost, [::1] with a port, a loopback Origin', async () => {
    for (const fields of [
      [['Host', host]],
      [['Host', `localhost:${server.port}`]],
      [['Host', `[::1]:${server.port}`]],
      [['Host', host], ['Origin', `http://[::1]:${server.port}`]],
    ]) {
      const res = await raw(server, { fields });
      assert.equal(res.status, 200, `${JSON.stringify(fields)}: ${res.raw.slice(0, 300)}`);
    }
  });
});
