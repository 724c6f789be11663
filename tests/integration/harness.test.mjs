// The test harness's own guarantees that other tests rely on (lib/harness.mjs): a server it
// hands out is the one it started, even when another process holds the port it was given.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { listensOn, startHttpServer } from './lib/harness.mjs';

function listen() {
  return new Promise((resolve) => {
    const server = net.createServer((socket) => socket.destroy());
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

test('listensOn tells the process that holds a listening port', async () => {
  const server = await listen();
  try {
    const { port } = server.address();
    assert.equal(listensOn(process.pid, port), true);
    assert.equal(listensOn(process.pid, port === 65535 ? port - 1 : port + 1), false);
    assert.equal(listensOn(1, port), false); // not ours (or not readable)
  } finally {
    server.close();
  }
});

test('a server slow to start on a port another process holds is refused, not mistaken for that process', async () => {
  const other = await listen();
  try {
    const { port } = other.address();
    // The child waits 2 s before it becomes toolport (exec keeps its pid), quiet log: the
    // port answers all along, but the listener is not the child.
    const wrapper = ['sh', '-c', 'sleep 2; exec "$0" "$@"'];
    await assert.rejects(
      startHttpServer({ port, wrapper, extraArgs: ['--log-level', 'warn'] }),
      /did not start listening/,
    );
  } finally {
    other.close();
  }
});
