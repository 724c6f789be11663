// Malformed input on the stdio transport: one JSON-RPC message per line on stdin, replies
// one per line on stdout, logs on stderr. A bad line gets an error and the process keeps
// serving the next one.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { TOOLPORT_BIN, INIT_PARAMS, LATEST, track, withTimeout } from './lib/harness.mjs';

// Starts `toolport serve --stdio --packs conformance`; killed when the test ends.
function startStdio(t) {
  const child = track(
    spawn(TOOLPORT_BIN, ['serve', '--stdio', '--packs', 'conformance'], { stdio: ['pipe', 'pipe', 'pipe'] }),
  );
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => (stderr += d));
  const lines = [];
  const raw = [];
  let waiter = null;
  let buffer = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d) => {
    buffer += d;
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      raw.push(line);
      lines.push(JSON.parse(line)); // stdout must carry nothing but JSON-RPC lines
      waiter?.();
    }
  });
  child.stdin.on('error', () => {});
  return {
    child,
    raw,
    stderr: () => stderr,
    send(text) {
      child.stdin.write(text);
    },
    sendJson(message) {
      child.stdin.write(JSON.stringify(message) + '\n');
    },
    // The next message on stdout (in order).
    async next(timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (lines.length === 0) {
        if (child.exitCode !== null || child.signalCode !== null) {
          throw new Error(`toolport exited (${child.exitCode ?? child.signalCode}) with no reply\n${stderr}`);
        }
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no reply on stdout within ${timeoutMs} ms\n${stderr}`);
        await withTimeout(new Promise((resolve) => (waiter = resolve)), left, 'stdout line').catch(() => {});
        waiter = null;
      }
      return lines.shift();
    },
    pending: () => lines.length,
  };
}

async function initialize(proc, protocolVersion = LATEST) {
  proc.sendJson({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: INIT_PARAMS(protocolVersion) });
  const reply = await proc.next();
  assert.equal(reply.id, 'init');
  assert.equal(reply.result.protocolVersion, protocolVersion);
  proc.sendJson({ jsonrpc: '2.0', method: 'notifications/initialized' });
}

function assertError(message, code, id = null) {
  assert.equal(message.jsonrpc, '2.0', JSON.stringify(message));
  assert.ok(message.error, `expected an error, got ${JSON.stringify(message)}`);
  assert.equal(message.error.code, code, JSON.stringify(message));
  assert.equal(typeof message.error.message, 'string');
  assert.deepEqual(message.id, id, JSON.stringify(message));
}

describe('stdio bad input', () => {
  it('truncated JSON line: -32700 with id null, then the next line is served', async (t) => {
    const proc = startStdio(t);
    proc.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVer\n');
    assertError(await proc.next(), -32700);
    await initialize(proc);
    proc.sendJson({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } });
    const reply = await proc.next();
    assert.equal(reply.id, 2);
    assert.deepEqual(reply.result.content, [{ type: 'text', text: 'This is a simple text response for testing.' }]);
  });

  it('truncated JSON after initialize: -32700, and the session keeps going', async (t) => {
    const proc = startStdio(t);
    await initialize(proc);
    proc.send('{"jsonrpc":"2.0","id":3,"method":"tools/li\n');
    assertError(await proc.next(), -32700);
    proc.sendJson({ jsonrpc: '2.0', id: 4, method: 'ping' });
    assert.deepEqual(await proc.next(), { jsonrpc: '2.0', id: 4, result: {} });
  });

  it('several bad lines in one write each get their own error, in order', async (t) => {
    const proc = startStdio(t);
    await initialize(proc);
    proc.send(
      [
        '{"jsonrpc":"2.0","id":5,', // truncated
        'not json at all',
        '{"jsonrpc":"1.0","id":6,"method":"ping"}', // wrong version
        '{"jsonrpc":"2.0","id":7,"method":"no/such/method"}',
        '', // blank lines are skipped
        '{"jsonrpc":"2.0","id":8,"method":"ping"}',
      ].join('\n') + '\n',
    );
    assertError(await proc.next(), -32700);
    assertError(await proc.next(), -32700);
    assertError(await proc.next(), -32600, 6);
    assertError(await proc.next(), -32601, 7);
    assert.deepEqual(await proc.next(), { jsonrpc: '2.0', id: 8, result: {} });
  });

  it('invalid UTF-8 in a line: -32700, then the next line is served', async (t) => {
    const proc = startStdio(t);
    await initialize(proc);
    proc.send(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}}\n')]));
    assertError(await proc.next(), -32700);
    proc.sendJson({ jsonrpc: '2.0', id: 10, method: 'ping' });
    assert.deepEqual(await proc.next(), { jsonrpc: '2.0', id: 10, result: {} });
  });

  it('10,000-deep nesting: -32600 mentioning depth, then the next line is served', async (t) => {
    const proc = startStdio(t);
    await initialize(proc);
    proc.send('['.repeat(10000) + ']'.repeat(10000) + '\n');
    const error = await proc.next();
    assertError(error, -32600);
    assert.match(error.error.message, /depth/i);
    proc.sendJson({ jsonrpc: '2.0', id: 11, method: 'ping' });
    assert.deepEqual(await proc.next(), { jsonrpc: '2.0', id: 11, result: {} });
  });

  it('a 20 MB line (over the 16 MB default limit): one -32600 error, then the next line is served', async (t) => {
    const proc = startStdio(t);
    await initialize(proc);
    const big = '{"jsonrpc":"2.0","id":20,"method":"ping","params":{"pad":"' + 'x'.repeat(20 * 1024 * 1024) + '"}}\n';
    proc.send(big);
    proc.sendJson({ jsonrpc: '2.0', id: 21, method: 'ping' });
    const error = await proc.next(10000);
    assertError(error, -32600);
    assert.match(error.error.message, /limit/);
    assert.deepEqual(await proc.next(10000), { jsonrpc: '2.0', id: 21, result: {} });
    assert.equal(proc.pending(), 0, 'exactly one error for the oversized line');
  });

  it('a request before initialize is refused; initialize still works after it', async (t) => {
    const proc = startStdio(t);
    proc.sendJson({ jsonrpc: '2.0', id: 12, method: 'tools/list' });
    assertError(await proc.next(), -32600, 12);
    // ping is allowed before initialize (lifecycle: "the client SHOULD NOT send requests
    // other than pings before the server has responded to the initialize request")
    proc.sendJson({ jsonrpc: '2.0', id: 'early-ping', method: 'ping' });
    assert.deepEqual(await proc.next(), { jsonrpc: '2.0', id: 'early-ping', result: {} });
    await initialize(proc);
    proc.sendJson({ jsonrpc: '2.0', id: 13, method: 'tools/list' });
    const listed = await proc.next();
    assert.ok(listed.result.tools.some((tool) => tool.name === 'test_simple_text'));
  });

  it('a batch in 2025-11-25 is refused with -32600; in 2025-03-26 it gets an array', async (t) => {
    const proc = startStdio(t);
    await initialize(proc);
    proc.sendJson([
      { jsonrpc: '2.0', id: 14, method: 'ping' },
      { jsonrpc: '2.0', id: 15, method: 'ping' },
    ]);
    assertError(await proc.next(), -32600);

    const old = startStdio(t);
    await initialize(old, '2025-03-26');
    old.sendJson([
      { jsonrpc: '2.0', id: 16, method: 'ping' },
      { jsonrpc: '2.0', id: 17, method: 'ping' },
    ]);
    const batch = await old.next();
    assert.ok(Array.isArray(batch), JSON.stringify(batch));
    assert.deepEqual(
      batch.map((m) => m.id).sort(),
      [16, 17],
    );
    for (const m of batch) assert.deepEqual(m.result, {});
  });

  it('stdin EOF ends the process cleanly (exit code 0)', async (t) => {
    const proc = startStdio(t);
    await initialize(proc);
    const exited = new Promise((resolve) => proc.child.once('exit', (code, signal) => resolve({ code, signal })));
    proc.child.stdin.end();
    assert.deepEqual(await withTimeout(exited, 5000, 'exit after stdin EOF'), { code: 0, signal: null });
    // logs went to stderr, never stdout
    assert.match(proc.stderr(), /serving MCP on stdio/);
    for (const line of proc.raw) assert.doesNotMatch(line, /\[toolport\]/);
  });
});
