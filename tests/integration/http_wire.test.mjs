// The HTTP/1.x wire as raw sockets see it: status lines, connection management (keep-alive,
// Connection: close, HTTP/1.0) and pipelined requests, for the JSON replies of tools/call
// and for error replies. Replies are written without Beast's serializer, so these pin the
// bytes down.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { serverForTest, initializeSession, assertHealthy, LATEST, post, waitFor } from './lib/harness.mjs';
import { NODE, yamlString } from './lib/gateway_setup.mjs';
import { VERBATIM_UPSTREAM } from './lib/verbatim_upstream.mjs';

const call = (id) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } });

function requestText(port, { version = '1.1', sessionId, body, path = '/mcp', connection } = {}) {
  const lines = [
    `POST ${path} HTTP/${version}`,
    `Host: 127.0.0.1:${port}`,
    'Content-Type: application/json',
    'Accept: application/json, text/event-stream',
    `MCP-Protocol-Version: ${LATEST}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
  ];
  if (sessionId) lines.push(`Mcp-Session-Id: ${sessionId}`);
  if (connection) lines.push(`Connection: ${connection}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

// Splits `raw` into complete responses (each framed by Content-Length).
function splitResponses(raw) {
  const out = [];
  let rest = raw;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) break;
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers = {};
    for (const line of lines) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    const length = Number(headers['content-length']);
    if (!Number.isInteger(length) || rest.length < end + 4 + length) break;
    out.push({ statusLine, headers, body: rest.slice(end + 4, end + 4 + length), headerBlock: rest.slice(0, end) });
    rest = rest.slice(end + 4 + length);
  }
  return { responses: out, rest };
}

// A socket that collects what the server sends; `next(n)` waits for n complete responses.
function connect(port) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ port, host: '127.0.0.1' });
    let raw = '';
    let closed = false;
    const waiters = [];
    const check = () => {
      for (const w of [...waiters]) {
        const { responses } = splitResponses(raw);
        if (responses.length >= w.count || closed) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(responses);
        }
      }
    };
    sock.setEncoding('latin1');
    sock.on('data', (d) => {
      raw += d;
      check();
    });
    sock.on('close', () => {
      closed = true;
      check();
    });
    sock.on('error', () => {});
    sock.once('connect', () =>
      resolve({
        sock,
        closed: () => closed,
        next: (count) =>
          new Promise((res, rej) => {
            const timer = setTimeout(() => rej(new Error(`timed out waiting for ${count} responses; got:\n${raw}`)), 5000);
            waiters.push({
              count,
              resolve: (r) => {
                clearTimeout(timer);
                res(r);
              },
            });
            check();
          }),
        waitClosed: () =>
          new Promise((res) => {
            if (closed) return res(true);
            const timer = setTimeout(() => res(false), 2000);
            sock.once('close', () => {
              clearTimeout(timer);
              res(true);
            });
          }),
      }),
    );
    sock.once('error', reject);
  });
}

function assertToolReply(response, { id, sessionId, statusLine = 'HTTP/1.1 200 OK' }) {
  assert.equal(response.statusLine, statusLine, response.headerBlock);
  assert.equal(response.headers['content-type'], 'application/json');
  assert.equal(response.headers['mcp-session-id'], sessionId);
  const message = JSON.parse(response.body);
  assert.equal(message.id, id);
  assert.equal(message.result.content[0].text, 'This is a simple text response for testing.');
}

describe('HTTP/1.x wire', () => {
  it('answers pipelined requests on one keep-alive connection, in order, and keeps it open', async (t) => {
    const server = await serverForTest(t);
    const { sessionId } = await initializeSession(server);
    const c = await connect(server.port);
    c.sock.write(
      requestText(server.port, { sessionId, body: call(1) }) + requestText(server.port, { sessionId, body: call(2) }),
    );
    const responses = await c.next(2);
    assert.equal(responses.length, 2);
    assertToolReply(responses[0], { id: 1, sessionId });
    assertToolReply(responses[1], { id: 2, sessionId });
    assert.equal(responses[0].headers.connection, undefined, 'HTTP/1.1 keeps the connection without saying so');
    c.sock.write(requestText(server.port, { sessionId, body: call(3) }));
    assertToolReply((await c.next(3))[2], { id: 3, sessionId });
    assert.equal(c.closed(), false);
    c.sock.destroy();
  });

  // A gateway's answer is pending while the upstream works: the connection watches the
  // socket meanwhile (a client that leaves cancels the call), and reads ahead what the client
  // sends. The next requests, sent before the first is answered or right after, are neither
  // lost nor answered out of order.
  it('answers pipelined requests whose answers wait for an upstream, in order, on one connection', async (t) => {
    const server = await serverForTest(t, {
      config: [
        'upstreams:',
        '  raw:',
        `    command: [${yamlString(NODE)}, ${yamlString(VERBATIM_UPSTREAM)}]`,
        // It calls no web API: no budget warning (an SSE reply, which ends the connection).
        '    downstream_calls_estimate: 0',
        '',
      ].join('\n'),
    });
    const { sessionId } = await initializeSession(server);
    await waitFor('the upstream', async () => {
      const res = await post(server, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { sessionId, protocolVersion: LATEST });
      return res.messages[0]?.result?.tools?.some((tool) => tool.name === 'verbatim');
    });
    const verbatim = (id) =>
      JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'verbatim', arguments: {} } });
    const c = await connect(server.port);
    c.sock.write(
      requestText(server.port, { sessionId, body: verbatim(1) }) +
        requestText(server.port, { sessionId, body: verbatim(2) }) +
        requestText(server.port, { sessionId, body: verbatim(3) }),
    );
    let responses = await c.next(3);
    for (const [i, id] of [1, 2, 3].entries()) {
      assert.equal(responses[i].statusLine, 'HTTP/1.1 200 OK', responses[i].body);
      assert.equal(JSON.parse(responses[i].body).id, id);
    }
    for (let id = 4; id <= 20; ++id) {  // one at a time, each sent as the last is answered
      c.sock.write(requestText(server.port, { sessionId, body: verbatim(id) }));
      responses = await c.next(id);
      assert.equal(responses.length, id, `closed: ${c.closed()}; ${JSON.stringify(responses.map((r) => r.statusLine))}`);
      assert.equal(JSON.parse(responses[id - 1].body).id, id);
    }
    assert.equal(c.closed(), false);
    c.sock.destroy();
    await assertHealthy(server);
  });

  // A connection reads every request into the same buffers (parsed_request.hpp): each
  // request sees its own fields and body only, whatever the one before it carried.
  it('reads a chunked body with a trailer, the first of repeated fields, and nothing of the request before', async (t) => {
    const server = await serverForTest(t);
    const { sessionId } = await initializeSession(server);
    const c = await connect(server.port);
    const body = call(1);
    const chunks = [body.slice(0, 10), body.slice(10, 40), body.slice(40)]
      .map((part) => `${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`)
      .join('');
    c.sock.write(
      [
        'POST /mcp HTTP/1.1',
        `Host: 127.0.0.1:${server.port}`,
        'content-type: application/json',
        'ACCEPT: application/json, text/event-stream',
        `mcp-protocol-version: ${LATEST}`,
        `MCP-SESSION-ID: ${sessionId}`,
        'Mcp-Session-Id: 0123456789abcdef0123456789abcdef', // the first one counts
        'Transfer-Encoding: chunked',
        'Trailer: X-Checksum',
        '',
        `${chunks}0\r\nX-Checksum: abc\r\n\r\n`,
      ].join('\r\n'),
    );
    assertToolReply((await c.next(1))[0], { id: 1, sessionId });
    // The same connection, no session id this time: refused, not answered in the last one's session.
    const lines = requestText(server.port, { body: call(2) });
    c.sock.write(lines);
    const second = (await c.next(2))[1];
    assert.equal(second.statusLine, 'HTTP/1.1 400 Bad Request', second.body);
    assert.equal(second.headers['mcp-session-id'], undefined);
    assert.match(JSON.parse(second.body).error.message, /session/i);
    // And a third, in the session again, with a shorter body than the first's.
    c.sock.write(requestText(server.port, { sessionId, body: call(3) }));
    assertToolReply((await c.next(3))[2], { id: 3, sessionId });
    c.sock.destroy();
  });

  it('honours Connection: close: says so and closes after the reply', async (t) => {
    const server = await serverForTest(t);
    const { sessionId } = await initializeSession(server);
    const c = await connect(server.port);
    c.sock.write(requestText(server.port, { sessionId, body: call(7), connection: 'close' }));
    const [response] = await c.next(1);
    assertToolReply(response, { id: 7, sessionId });
    assert.equal(response.headers.connection, 'close');
    assert.equal(await c.waitClosed(), true, 'the server closes the connection');
  });

  it('answers HTTP/1.0 with a 1.0 status line and closes, unless asked to keep alive', async (t) => {
    const server = await serverForTest(t);
    const { sessionId } = await initializeSession(server);

    const once = await connect(server.port);
    once.sock.write(requestText(server.port, { version: '1.0', sessionId, body: call(1) }));
    const [plain] = await once.next(1);
    assertToolReply(plain, { id: 1, sessionId, statusLine: 'HTTP/1.0 200 OK' });
    assert.equal(plain.headers.connection, undefined, 'HTTP/1.0 closes by default: nothing to say');
    assert.equal(await once.waitClosed(), true);

    const kept = await connect(server.port);
    kept.sock.write(requestText(server.port, { version: '1.0', sessionId, body: call(2), connection: 'keep-alive' }));
    const [first] = await kept.next(1);
    assertToolReply(first, { id: 2, sessionId, statusLine: 'HTTP/1.0 200 OK' });
    assert.equal(first.headers.connection, 'keep-alive');
    kept.sock.write(requestText(server.port, { version: '1.0', sessionId, body: call(3), connection: 'keep-alive' }));
    assertToolReply((await kept.next(2))[1], { id: 3, sessionId, statusLine: 'HTTP/1.0 200 OK' });
    kept.sock.destroy();
  });

  it('writes a reply larger than the socket buffer in full to a client that reads late', async (t) => {
    const server = await serverForTest(t, { env: { TOOLPORT_TEST_PACK: '1' }, packs: 'conformance,testing' });
    const { sessionId } = await initializeSession(server);
    const c = await connect(server.port);
    c.sock.pause(); // nothing is read for a while: the server's first write cannot take it all
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 'big',
      method: 'tools/call',
      params: { name: 'test_large', arguments: { bytes: 900000 } },
    });
    c.sock.write(requestText(server.port, { sessionId, body: big }) + requestText(server.port, { sessionId, body: call(2) }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    c.sock.resume();
    const [large, small] = await c.next(2);
    assert.equal(large.statusLine, 'HTTP/1.1 200 OK');
    const message = JSON.parse(large.body);
    assert.equal(message.id, 'big');
    assert.equal(message.result.content[0].text.length, 900000);
    assert.ok(/^x+$/.test(message.result.content[0].text));
    assertToolReply(small, { id: 2, sessionId });
    c.sock.destroy();
  });

  it('writes error replies with the same framing, and the connection goes on', async (t) => {
    const server = await serverForTest(t);
    const { sessionId } = await initializeSession(server);
    const c = await connect(server.port);
    c.sock.write(
      requestText(server.port, { version: '1.0', path: '/nowhere', body: call(1), connection: 'keep-alive' }) +
        requestText(server.port, { version: '1.0', sessionId: 'f'.repeat(32), body: call(2), connection: 'keep-alive' }) +
        requestText(server.port, { version: '1.0', sessionId, body: call(3), connection: 'keep-alive' }),
    );
    const [notFound, unknownSession, ok] = await c.next(3);
    assert.equal(notFound.statusLine, 'HTTP/1.0 404 Not Found');
    assert.equal(notFound.headers.connection, 'keep-alive');
    assert.equal(notFound.headers['content-type'], 'application/json');
    assert.match(JSON.parse(notFound.body).error.message, /Not Found: the MCP endpoint is \/mcp/);
    assert.equal(unknownSession.statusLine, 'HTTP/1.0 404 Not Found');
    assert.match(JSON.parse(unknownSession.body).error.message, /Session not found/);
    assertToolReply(ok, { id: 3, sessionId, statusLine: 'HTTP/1.0 200 OK' });
    c.sock.destroy();
    await assertHealthy(server);
  });
});
