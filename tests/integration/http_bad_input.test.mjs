// Hostile and malformed input over HTTP, sent with raw fetch and raw sockets. Each test
// asserts the exact HTTP status and JSON-RPC error code, then that the server still
// serves a normal initialize (and did not exit).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import http from 'node:http';
import {
  serverForTest,
  assertAlive,
  assertHealthy,
  assertRpcError,
  initializeSession,
  post,
  request,
  rawExchange,
  parseRawResponse,
  httpRequest,
  withTimeout,
  INIT_PARAMS,
  LATEST,
} from './lib/harness.mjs';

const ping = (id = 1) => ({ jsonrpc: '2.0', id, method: 'ping' });

// Sends a POST /mcp head with `framing` (a Content-Length or Transfer-Encoding line), waits
// briefly for an early answer, then streams `chunk` until `total` bytes went out or the
// server answers. One chunk at a time,
// letting the event loop poll for the answer between chunks, so that an early 413 is read
// before the next write (a write after the server's close fails with EPIPE and Node then
// drops what was received).
async function streamBody(port, framing, chunk, total) {
  let sent = 0;
  let answered = false;
  const result = await rawExchange(
    port,
    async (sock) => {
      const firstData = new Promise((resolve) =>
        sock.once('data', () => {
          answered = true;
          resolve();
        }),
      );
      sock.write(
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
          `Accept: application/json, text/event-stream\r\n${framing}\r\n\r\n`,
      );
      // A server may refuse on the head alone (a Content-Length over its limit): give it a
      // moment to say so before the body starts.
      await Promise.race([firstData, new Promise((resolve) => setTimeout(resolve, 200))]);
      while (!answered && !sock.destroyed && sent < total) {
        await new Promise((resolve) => sock.write(chunk, resolve));
        sent += chunk.length;
        await new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
      }
    },
    { timeoutMs: 20000 },
  );
  return { result, sent };
}

// POSTs `total` bytes of spaces through node:http with back-pressure, as an ordinary
// client would; resolves with the response status, or the error that ended the upload.
function uploadThroughNodeHttp(port, total) {
  return new Promise((resolve) => {
    let sent = 0;
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/mcp',
        agent: false,
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Content-Length': total },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode, text, sent }));
        res.on('error', () => resolve({ status: res.statusCode, text, sent }));
      },
    );
    req.on('error', (e) => resolve({ error: e.code ?? e.message, sent }));
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    const pump = () => {
      while (sent < total && !req.destroyed) {
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once('drain', pump);
          return;
        }
      }
      if (sent >= total) req.end();
    };
    pump();
  });
}

describe('malformed bodies', () => {
  it('truncated JSON: 400 with -32700 (parse error), id null', async (t) => {
    const server = await serverForTest(t);
    const res = await post(server, '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-');
    assert.equal(res.status, 400, res.text);
    assertRpcError(res, -32700);
    await assertHealthy(server);
  });

  it('truncated JSON inside an initialized session: 400 with -32700', async (t) => {
    const server = await serverForTest(t);
    const { sessionId } = await initializeSession(server);
    const res = await post(server, '{"jsonrpc":"2.0","id":2,"method":"tools/li', { sessionId, protocolVersion: LATEST });
    assert.equal(res.status, 400, res.text);
    assertRpcError(res, -32700);
    // the session itself is unharmed
    const ok = await post(server, ping(3), { sessionId, protocolVersion: LATEST });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.messages, [{ jsonrpc: '2.0', id: 3, result: {} }]);
    await assertHealthy(server);
  });

  it('invalid UTF-8 bytes inside a string: 400 with -32700', async (t) => {
    const server = await serverForTest(t);
    const body = Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bad'),
      Buffer.from([0xff, 0xfe, 0xc3, 0x28]),
      Buffer.from('","version":"1"}}}'),
    ]);
    const res = await post(server, body);
    assert.equal(res.status, 400, res.text);
    assertRpcError(res, -32700);
    assert.equal(res.headers.get('mcp-session-id'), null, 'no session is created for an unparseable initialize');
    await assertHealthy(server);
  });

  it('10,000-deep nesting [[[[...: 400 with -32600 mentioning the depth', async (t) => {
    const server = await serverForTest(t);
    const res = await post(server, '['.repeat(10000) + ']'.repeat(10000));
    assert.equal(res.status, 400, res.text);
    assertRpcError(res, -32600, { message: /depth/i });
    // unbalanced, as an attacker would send it
    const res2 = await post(server, '['.repeat(10000));
    assert.equal(res2.status, 400, res2.text);
    assertRpcError(res2, -32600, { message: /depth/i });
    await assertHealthy(server);
  });

  it('10,000-deep nesting inside params of a real session: 400 with -32600', async (t) => {
    const server = await serverForTest(t);
    const { sessionId } = await initializeSession(server);
    const body = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"test_simple_text","arguments":{"x":${'{"a":'.repeat(10000)}1${'}'.repeat(10000)}}}}`;
    const res = await post(server, body, { sessionId, protocolVersion: LATEST });
    assert.equal(res.status, 400, res.text);
    assertRpcError(res, -32600, { message: /depth/i });
    await assertHealthy(server);
  });

  it('a 100 MB body with Content-Length, streamed: 413, and the server lives', async (t) => {
    const server = await serverForTest(t);
    const total = 100 * 1024 * 1024;
    const chunk = Buffer.alloc(256 * 1024, 0x20); // spaces: valid JSON whitespace
    const started = Date.now();
    const { result, sent } = await streamBody(server.port, `Content-Length: ${total}`, chunk, total);
    assert.equal(result.timedOut, false, `no answer within 20 s (sent ${sent} bytes)`);
    assert.equal(result.status, 413, `expected 413, got: ${result.raw.slice(0, 300)} (error: ${result.error})`);
    const body = JSON.parse(result.body);
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(body.id, null);
    assert.equal(body.error.code, -32600);
    assert.match(body.error.message, /limit/);
    assert.ok(sent < total, 'the server answered before the whole 100 MB was sent');
    assert.ok(Date.now() - started < 20000);
    await assertHealthy(server);
  });

  it('a 100 MB body from an ordinary streaming client (node:http): the client receives the 413', async (t) => {
    // RFC 9112 section 9.6: a server that closes at once while the client is still sending
    // makes the client's TCP stack discard the response (the "TCP reset problem"); servers
    // are to close in stages (half-close, drain the rest for a while). An ordinary client
    // that writes its body with back-pressure must get to see the 413.
    const server = await serverForTest(t);
    // The outcome is a race on a server that resets, so try several times: each must see it.
    for (let attempt = 1; attempt <= 5; attempt++) {
      const outcome = await withTimeout(uploadThroughNodeHttp(server.port, 100 * 1024 * 1024), 20000, '100 MB upload');
      assert.equal(outcome.status, 413, `attempt ${attempt}: the client saw no HTTP response: ${JSON.stringify(outcome)}`);
    }
    await assertHealthy(server);
  });

  it('a 100 MB chunked body (no Content-Length), streamed: 413, and the server lives', async (t) => {
    const server = await serverForTest(t);
    const total = 100 * 1024 * 1024;
    const piece = Buffer.alloc(256 * 1024, 0x20);
    const framed = Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]);
    const { result, sent } = await streamBody(server.port, 'Transfer-Encoding: chunked', framed, total);
    assert.equal(result.timedOut, false, `no answer within 20 s (sent ${sent} bytes)`);
    assert.equal(result.status, 413, `expected 413, got: ${result.raw.slice(0, 300)} (error: ${result.error})`);
    assert.ok(sent < total, 'the server answered before the whole 100 MB was sent');
    await assertHealthy(server);
  });
});

describe('JSON-RPC violations', () => {
  it('a batch in protocol 2025-06-18: 400 with -32600', async (t) => {
    const server = await serverForTest(t);
    const { sessionId } = await initializeSession(server, '2025-06-18');
    const res = await post(server, [ping(1), ping(2)], { sessionId, protocolVersion: '2025-06-18' });
    assert.equal(res.status, 400, res.text);
    assertRpcError(res, -32600);
    await assertHealthy(server);
  });

  it('a batch in protocol 2025-03-26: 200 with an array of responses', async (t) => {
    const server = await serverForTest(t);
    const { sessionId } = await initializeSession(server, '2025-03-26');
    const res = await post(
      server,
      [ping(1), { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'none', progress: 1 } }, { jsonrpc: '2.0', id: 'b', method: 'tools/list' }],
      { sessionId, protocolVersion: '2025-03-26' },
    );
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.ok(Array.isArray(res.json), `expected a JSON array, got ${res.text.slice(0, 200)}`);
    assert.equal(res.json.length, 2);
    const byId = Object.fromEntries(res.json.map((m) => [m.id, m]));
    assert.deepEqual(byId[1], { jsonrpc: '2.0', id: 1, result: {} });
    assert.ok(byId.b?.result?.tools?.some((tool) => tool.name === 'test_simple_text'), res.text.slice(0, 300));
    await assertHealthy(server);
  });

  it('an empty batch []: 400 with -32600', async (t) => {
    const server = await serverForTest(t);
    const { sessionId } = await initializeSession(server, '2025-03-26');
    const res = await post(server, '[]', { sessionId, protocolVersion: '2025-03-26' });
    assert.equal(res.status, 400, res.text);
    assertRpcError(res, -32600);
    await assertHealthy(server);
  });

  it('"jsonrpc": "1.0": 400 with error -32600 for that id', async (t) => {
    const server = await serverForTest(t);
    const { sessionId } = await initializeSession(server);
    const res = await post(server, { jsonrpc: '1.0', id: 5, method: 'ping' }, { sessionId, protocolVersion: LATEST });
    assert.equal(res.status, 400, res.text);
    assertRpcError(res, -32600, { id: 5 });
    await assertHealthy(server);
  });

  for (const [what, body] of [
    ['a bare number 42', '42'],
    ['id true', '{"jsonrpc":"2.0","id":true,"method":"ping"}'],
    ['id null', '{"jsonrpc":"2.0","id":null,"method":"ping"}'],
    ['id []', '{"jsonrpc":"2.0","id":[],"method":"ping"}'],
    ['id {}', '{"jsonrpc":"2.0","id":{},"method":"ping"}'],
  ]) {
    it(`${what}: answered on the POST with 400 and id null (not 202)`, async (t) => {
      const server = await serverForTest(t);
      const { sessionId } = await initializeSession(server);
      const res = await post(server, body, { sessionId, protocolVersion: LATEST });
      assert.equal(res.status, 400, res.text);
      assertRpcError(res, -32600, { id: null });
      await assertHealthy(server);
    });
  }

  it('a 2025-03-26 batch of malformed members ([[1], 2]): an error for each, on the POST', async (t) => {
    const server = await serverForTest(t);
    const { sessionId } = await initializeSession(server, '2025-03-26');
    const res = await post(server, '[[1], 2]', { sessionId, protocolVersion: '2025-03-26' });
    assert.equal(res.status, 400, res.text);
    assert.ok(Array.isArray(res.json), res.text);
    assert.equal(res.json.length, 2);
    for (const reply of res.json) {
      assert.equal(reply.id, null);
      assert.equal(reply.error.code, -32600);
    }
  });

  it('two requests sharing an id in one batch: a result and an error, both on the POST', async (t) => {
    const server = await serverForTest(t);
    const { sessionId } = await initializeSession(server, '2025-03-26');
    const res = await post(server, [ping(4), ping(4), ping(5)], { sessionId, protocolVersion: '2025-03-26' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.length, 3, res.text);
    assert.equal(res.json.filter((m) => m.id === 4 && m.result).length, 1, res.text);
    assert.equal(res.json.filter((m) => m.id === 4 && m.error?.code === -32600).length, 1, res.text);
  });

  it('unknown method: -32601', async (t) => {
    const server = await serverForTest(t);
    const { sessionId } = await initializeSession(server);
    const res = await post(server, { jsonrpc: '2.0', id: 6, method: 'no/such/method' }, { sessionId, protocolVersion: LATEST });
    assert.equal(res.status, 200, res.text);
    assertRpcError(res, -32601, { id: 6 });
    await assertHealthy(server);
  });

  it('request before initialize (no session id): 400', async (t) => {
    const server = await serverForTest(t);
    const res = await post(server, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.equal(res.status, 400, res.text);
    assertRpcError(res, -32600);
    assert.equal(res.headers.get('mcp-session-id'), null);
    await assertHealthy(server);
  });

  it('second initialize on the same session: JSON-RPC error -32600', async (t) => {
    const server = await serverForTest(t);
    const { sessionId } = await initializeSession(server);
    const res = await post(server, { jsonrpc: '2.0', id: 7, method: 'initialize', params: INIT_PARAMS() }, { sessionId, protocolVersion: LATEST });
    assert.equal(res.status, 200, res.text);
    assertRpcError(res, -32600, { id: 7 });
    // the first session keeps working
    const ok = await post(server, ping(8), { sessionId, protocolVersion: LATEST });
    assert.deepEqual(ok.messages, [{ jsonrpc: '2.0', id: 8, result: {} }]);
    await assertHealthy(server);
  });

  it('wrong Content-Type: 415', async (t) => {
    const server = await serverForTest(t);
    const res = await post(server, { jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT_PARAMS() }, { headers: { 'Content-Type': 'text/plain' } });
    assert.equal(res.status, 415, res.text);
    assertRpcError(res, -32600);
    await assertHealthy(server);
  });

  it('Accept without text/event-stream on a request: 406', async (t) => {
    const server = await serverForTest(t);
    const res = await post(server, { jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT_PARAMS() }, { headers: { Accept: 'application/json' } });
    assert.equal(res.status, 406, res.text);
    assertRpcError(res, -32600);
    await assertHealthy(server);
  });
});

describe('session and header checks', () => {
  it('unknown session id: 404 for POST, GET and DELETE', async (t) => {
    const server = await serverForTest(t);
    const bogus = 'f'.repeat(32);
    const res = await post(server, ping(1), { sessionId: bogus, protocolVersion: LATEST });
    assert.equal(res.status, 404, res.text);
    assertRpcError(res, -32600);
    const get = await request(server, 'GET', { headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': bogus, 'MCP-Protocol-Version': LATEST } });
    assert.equal(get.status, 404, get.text);
    const del = await request(server, 'DELETE', { headers: { 'Mcp-Session-Id': bogus, 'MCP-Protocol-Version': LATEST } });
    assert.equal(del.status, 404, del.text);
    await assertHealthy(server);
  });

  it('DELETE ends a session; the id then gets 404', async (t) => {
    const server = await serverForTest(t);
    const { sessionId } = await initializeSession(server);
    const del = await request(server, 'DELETE', { headers: { 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': LATEST } });
    assert.equal(del.status, 200, del.text);
    const res = await post(server, ping(2), { sessionId, protocolVersion: LATEST });
    assert.equal(res.status, 404, res.text);
    await assertHealthy(server);
  });

  it('unsupported MCP-Protocol-Version "1999-01-01": 400', async (t) => {
    const server = await serverForTest(t);
    const { sessionId } = await initializeSession(server);
    const res = await post(server, ping(1), { sessionId, protocolVersion: '1999-01-01' });
    assert.equal(res.status, 400, res.text);
    assertRpcError(res, -32600, { message: /1999-01-01/ });
    await assertHealthy(server);
  });

  it('hostile Origin "http://evil.example": 403 (a loopback Origin passes)', async (t) => {
    const server = await serverForTest(t);
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT_PARAMS() };
    const res = await post(server, init, { headers: { Origin: 'http://evil.example' } });
    assert.equal(res.status, 403, res.text);
    assertRpcError(res, -32600);
    assert.equal(res.headers.get('mcp-session-id'), null);
    const good = await post(server, init, { headers: { Origin: `http://localhost:${server.port}` } });
    assert.equal(good.status, 200, good.text);
    await assertHealthy(server);
  });

  it('Host header "evil.example" (DNS rebinding): 403', async (t) => {
    const server = await serverForTest(t);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT_PARAMS() });
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    const res = await httpRequest(server.port, { headers: { ...headers, Host: 'evil.example' }, body });
    assert.equal(res.status, 403, res.text);
    assertRpcError(res, -32600);
    const res2 = await httpRequest(server.port, { headers: { ...headers, Host: 'evil.example:8080' }, body });
    assert.equal(res2.status, 403, res2.text);
    const good = await httpRequest(server.port, { headers: { ...headers, Host: `localhost:${server.port}` }, body });
    assert.equal(good.status, 200, good.text);
    await assertHealthy(server);
  });
});

describe('misbehaving connections', () => {
  it('HTTP/1.1 without Host: 400 (RFC 9112 §3.2)', async (t) => {
    const server = await serverForTest(t);
    const body = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    const result = await rawExchange(server.port, (sock) => {
      sock.write(`POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    });
    assert.equal(result.status, 400, result.raw.slice(0, 300));
    assert.match(result.raw, /Host header/);
    await assertHealthy(server);
  });

  it('half-closed socket mid-body: the server answers or closes promptly, and lives', async (t) => {
    const server = await serverForTest(t);
    const started = Date.now();
    const result = await rawExchange(
      server.port,
      (sock) => {
        sock.write(
          `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nContent-Type: application/json\r\n` +
            `Accept: application/json, text/event-stream\r\nContent-Length: 200\r\n\r\n{"jsonrpc":"2.0","id":1,"met`,
        );
        sock.end(); // FIN: no more bytes will ever come
      },
      { timeoutMs: 5000 },
    );
    assert.equal(result.timedOut, false, 'the server kept a half-closed connection open for 5 s');
    assert.ok(Date.now() - started < 5000);
    if (result.status !== null) assert.equal(result.status, 400, result.raw.slice(0, 300));
    await assertHealthy(server);
  });

  it('half-closed socket mid-headers: closed promptly, and the server lives', async (t) => {
    const server = await serverForTest(t);
    const result = await rawExchange(
      server.port,
      (sock) => {
        sock.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nContent-Ty`);
        sock.end();
      },
      { timeoutMs: 5000 },
    );
    assert.equal(result.timedOut, false, 'the server kept a half-closed connection open for 5 s');
    if (result.status !== null) assert.equal(result.status, 400, result.raw.slice(0, 300));
    await assertHealthy(server);
  });

  it('a complete request then a half-close: the response still arrives', async (t) => {
    const server = await serverForTest(t);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT_PARAMS() });
    const result = await rawExchange(
      server.port,
      (sock) => {
        sock.write(
          `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nContent-Type: application/json\r\n` +
            `Accept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
        sock.end();
      },
      { timeoutMs: 5000 },
    );
    assert.equal(result.timedOut, false);
    assert.equal(result.status, 200, result.raw.slice(0, 300));
    assert.equal(JSON.parse(result.body).result.protocolVersion, LATEST);
    await assertHealthy(server);
  });

  it('garbage that is not HTTP: 400 or a close, and the server lives', async (t) => {
    const server = await serverForTest(t);
    const result = await rawExchange(server.port, (sock) => sock.write('\x00\x01\x02 NOT HTTP AT ALL\r\n\r\n'), { timeoutMs: 5000 });
    assert.equal(result.timedOut, false, 'no answer or close within 5 s');
    if (result.status !== null) assert.equal(result.status, 400);
    await assertHealthy(server);
  });

  it('a client that never reads its SSE stream does not stall other clients', async (t) => {
    const server = await serverForTest(t);
    const { sessionId } = await initializeSession(server);

    // Open the standalone GET stream on a raw socket; after the response head, stop reading.
    const stalled = net.connect({ port: server.port, host: '127.0.0.1' });
    t.after(() => stalled.destroy());
    const head = await withTimeout(
      new Promise((resolve, reject) => {
        let raw = '';
        stalled.on('error', reject);
        stalled.on('data', function onData(d) {
          raw += d.toString('latin1');
          if (raw.includes('\r\n\r\n')) {
            stalled.off('data', onData);
            stalled.pause(); // never read again
            resolve(parseRawResponse(raw));
          }
        });
        stalled.on('connect', () =>
          stalled.write(
            `GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAccept: text/event-stream\r\n` +
              `Mcp-Session-Id: ${sessionId}\r\nMCP-Protocol-Version: ${LATEST}\r\n\r\n`,
          ),
        );
      }),
      5000,
      'GET /mcp response head',
    );
    assert.equal(head.status, 200);
    assert.match(head.headers['content-type'], /^text\/event-stream/);

    // Another client makes the server push list_changed notifications into the stalled
    // stream, while fresh sessions keep calling tools; every call must stay prompt.
    const other = await initializeSession(server);
    const latencies = [];
    const deadline = Date.now() + 20000;
    for (let i = 0; i < 150 && Date.now() < deadline; i++) {
      const t0 = Date.now();
      const name = i % 3 === 0 ? 'test_simple_text' : 'test_trigger_tool_change';
      const res = await post(
        server,
        { jsonrpc: '2.0', id: i + 10, method: 'tools/call', params: { name, arguments: {} } },
        { sessionId: other.sessionId, protocolVersion: LATEST, timeoutMs: 5000 },
      );
      latencies.push(Date.now() - t0);
      assert.equal(res.status, 200, res.text);
      const reply = res.messages.find((m) => m.id === i + 10);
      assert.ok(reply?.result, res.text.slice(0, 200));
    }
    assert.equal(latencies.length, 150, 'all calls done within 20 s');
    assert.ok(Math.max(...latencies) < 2000, `slowest call ${Math.max(...latencies)} ms`);
    // A brand-new session still works while the stalled stream is open.
    await assertHealthy(server);
    // And the stalled session's own POSTs are still answered.
    const own = await post(server, ping(1), { sessionId, protocolVersion: LATEST, timeoutMs: 5000 });
    assert.equal(own.status, 200, own.text);
    // The stalled stream was really being fed: what waited in the buffers is list_changed.
    const backlog = await withTimeout(
      new Promise((resolve) => {
        let text = '';
        stalled.on('data', (d) => {
          text += d.toString('latin1');
          if (text.includes('notifications/tools/list_changed')) resolve(text);
        });
        stalled.resume();
      }),
      5000,
      'list_changed on the stalled stream',
    );
    assert.match(backlog, /notifications\/tools\/list_changed/);
    assertAlive(server);
  });

  it('a client that never reads a multi-megabyte SSE response does not stall other clients', async (t) => {
    const server = await serverForTest(t);
    // A 2025-03-26 batch: one call with progress (so the reply is an SSE stream) and 999
    // tools/list requests, whose replies add up to far more than the socket buffers hold.
    const { sessionId } = await initializeSession(server, '2025-03-26');
    const one = await post(server, { jsonrpc: '2.0', id: 0, method: 'tools/list' }, { sessionId, protocolVersion: '2025-03-26' });
    const copies = 999; // with the progress call: a batch of 1000, the default http.max_batch_size
    assert.ok(one.text.length * copies > 4 * 1024 * 1024, `tools/list is only ${one.text.length} bytes`);
    const batch = [
      { jsonrpc: '2.0', id: 'p', method: 'tools/call', params: { name: 'test_tool_with_progress', arguments: {}, _meta: { progressToken: 'stall' } } },
    ];
    for (let i = 1; i <= copies; i++) batch.push({ jsonrpc: '2.0', id: i, method: 'tools/list' });
    const body = JSON.stringify(batch);

    const stalled = net.connect({ port: server.port, host: '127.0.0.1' });
    t.after(() => stalled.destroy());
    const head = await withTimeout(
      new Promise((resolve, reject) => {
        let raw = '';
        stalled.on('error', reject);
        stalled.on('data', function onData(d) {
          raw += d.toString('latin1');
          if (raw.includes('\r\n\r\n')) {
            stalled.off('data', onData);
            stalled.pause(); // never read again
            resolve(parseRawResponse(raw));
          }
        });
        stalled.on('connect', () =>
          stalled.write(
            `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nContent-Type: application/json\r\n` +
              `Accept: application/json, text/event-stream\r\nMcp-Session-Id: ${sessionId}\r\n` +
              `MCP-Protocol-Version: 2025-03-26\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
          ),
        );
      }),
      5000,
      'POST batch response head',
    );
    assert.equal(head.status, 200);
    assert.match(head.headers['content-type'], /^text\/event-stream/);

    const latencies = [];
    for (let i = 0; i < 30; i++) {
      const t0 = Date.now();
      const fresh = await initializeSession(server);
      const res = await post(
        server,
        { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } },
        { sessionId: fresh.sessionId, protocolVersion: LATEST, timeoutMs: 5000 },
      );
      latencies.push(Date.now() - t0);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.messages[0].result.content[0].text, 'This is a simple text response for testing.');
    }
    assert.ok(Math.max(...latencies) < 2000, `slowest initialize+call ${Math.max(...latencies)} ms`);
    // The stalled session still answers on another connection.
    const own = await post(server, ping('own'), { sessionId, protocolVersion: '2025-03-26', timeoutMs: 5000 });
    assert.equal(own.status, 200, own.text);
    assert.deepEqual(own.messages, [{ jsonrpc: '2.0', id: 'own', result: {} }]);
    stalled.destroy();
    await assertHealthy(server);
  });
});
