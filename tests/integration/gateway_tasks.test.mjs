// Tasks (io.modelcontextprotocol/tasks) through the gateway, handed to an upstream that runs
// them: a second toolport on --packs conformance, reached through a recording HTTP proxy so
// the test sees what the gateway asked of it; and an SDK server of the 2025-11-25 task model
// only (lib/tasks_v1_upstream.mjs) over stdio. The client speaks 2026-07-28 to the gateway
// with raw requests that declare the extension; the gateway speaks 2026-07-28 to the
// upstream. A tool that requires tasks upstream runs as an upstream task the gateway
// polls; its tool error, its protocol error, its questions and a cancellation reach the
// client's task as they would directly, and the upstream task follows the client's.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startHttpServer, post, waitFor, sleep } from './lib/harness.mjs';
import { NODE, yamlString } from './lib/gateway_setup.mjs';
import { TASKS_V1_UPSTREAM } from './lib/tasks_v1_upstream.mjs';

const TASKS = 'io.modelcontextprotocol/tasks';
const VERSION = '2026-07-28';

// A proxy in front of `target` that keeps every JSON-RPC message it is sent.
function startRecordingProxy(target) {
  const seen = [];
  const targetUrl = new URL(target.url);
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (body.length) {
        try {
          const message = JSON.parse(body);
          for (const m of [].concat(message)) seen.push(m);
        } catch {
          // not JSON: forwarded all the same
        }
      }
      const upstream = http.request(
        { host: targetUrl.hostname, port: targetUrl.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      // A stateless request is cancelled by closing its stream: so is the upstream's.
      res.on('close', () => upstream.destroy());
      upstream.end(body);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}/mcp`,
        seen,
        calls: (method) => seen.filter((m) => m.method === method),
        close: () => new Promise((done) => server.close(done)),
      });
    });
  });
}

let nextId = 1;
// One stateless request to `server`; `tasks` says whether it declares the extension.
async function rpc(server, method, params = {}, { tasks = true } = {}) {
  const capabilities = { elicitation: {} };
  if (tasks) capabilities.extensions = { [TASKS]: {} };
  const body = {
    jsonrpc: '2.0',
    id: nextId++,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': VERSION,
        'io.modelcontextprotocol/clientCapabilities': capabilities,
        'io.modelcontextprotocol/clientInfo': { name: 'toolport-it-gateway-tasks', version: '1.0.0' },
      },
    },
  };
  const headers = { 'Mcp-Method': method };
  if (method === 'tools/call') headers['Mcp-Name'] = params.name;
  if (method.startsWith('tasks/')) headers['Mcp-Name'] = params.taskId;
  const res = await post(server, body, { protocolVersion: VERSION, headers, timeoutMs: 20000 });
  const reply = res.messages.find((m) => m.id === body.id);
  assert.ok(reply, `no reply to ${method}: ${res.status} ${res.text.slice(0, 300)}`);
  return reply;
}

async function result(server, method, params, options) {
  const reply = await rpc(server, method, params, options);
  assert.ok(reply.result, `${method} failed: ${JSON.stringify(reply.error)}`);
  return reply.result;
}

// tasks/get until the task leaves `working` (or reaches `until`).
async function settle(server, taskId, until = null) {
  let task;
  await waitFor(`task ${taskId} settles`, async () => {
    task = await result(server, 'tasks/get', { taskId });
    return until ? task.status === until : task.status !== 'working';
  }, 15000);
  return task;
}

// The upstream task the gateway created for a call of `tool` (its tools/call, then the
// tasks/get that named the id).
function upstreamTaskIds(proxy) {
  return [...new Set(proxy.calls('tasks/get').map((m) => m.params.taskId))];
}

describe('gateway: tasks run by an upstream that supports them', () => {
  let upstream;
  let proxy;
  let gateway;

  before(async () => {
    upstream = await startHttpServer({ packs: 'conformance' });
    proxy = await startRecordingProxy(upstream);
    gateway = await startHttpServer({
      packs: '',
      config: `
upstreams:
  inner:
    url: ${proxy.url}
    protocol_version: "${VERSION}"
`,
    });
    await waitFor('the upstream tools are served', async () => {
      const listed = await result(gateway, 'tools/list', {});
      return listed.tools.some((t) => t.name === 'failing_job');
    });
  });

  after(async () => {
    await gateway?.stop();
    await proxy?.close();
    await upstream?.stop();
  });

  it('serves the upstream tool that requires tasks as requiring them', async () => {
    const { tools } = await result(gateway, 'tools/list', {});
    const failing = tools.find((t) => t.name === 'failing_job');
    assert.deepEqual(failing.execution, { taskSupport: 'required' });
    // A client without the extension is refused by the gateway, as by a server of its own.
    const refused = await rpc(gateway, 'tools/call', { name: 'failing_job', arguments: {} }, { tasks: false });
    assert.equal(refused.error?.code, -32021, JSON.stringify(refused));
  });

  it('runs a required-task tool as an upstream task: its tool error completes the task with isError', async () => {
    const before = proxy.seen.length;
    const created = await result(gateway, 'tools/call', { name: 'failing_job', arguments: {} });
    assert.equal(created.resultType, 'task');
    assert.equal(typeof created.taskId, 'string');
    const task = await settle(gateway, created.taskId);
    assert.equal(task.status, 'completed', JSON.stringify(task));
    assert.equal(task.result.isError, true);
    assert.match(task.result.content[0].text, /The job failed, as it always does/);
    assert.equal(typeof task.result._meta?.downstream_api_calls, 'number', JSON.stringify(task.result._meta));

    // Upstream: one tools/call that declared the extension (it would have been refused
    // with -32021 otherwise), then tasks/get of the task it created.
    const sent = proxy.seen.slice(before);
    const calls = sent.filter((m) => m.method === 'tools/call');
    assert.equal(calls.length, 1, JSON.stringify(calls));
    assert.ok(calls[0].params._meta['io.modelcontextprotocol/clientCapabilities'].extensions[TASKS]);
    const polled = sent.filter((m) => m.method === 'tasks/get');
    assert.ok(polled.length >= 1);
    assert.notEqual(polled[0].params.taskId, created.taskId, 'the upstream task is its own');
    const direct = await result(upstream, 'tasks/get', { taskId: polled[0].params.taskId });
    assert.equal(direct.status, 'completed');
  });

  it('fails the task with the upstream task\'s protocol error', async () => {
    const created = await result(gateway, 'tools/call', { name: 'protocol_error_job', arguments: {} });
    assert.equal(created.resultType, 'task');
    const task = await settle(gateway, created.taskId);
    assert.equal(task.status, 'failed', JSON.stringify(task));
    assert.equal(task.error.code, -32603);
    assert.match(task.error.message, /protocol_error_job broke down/);
    assert.equal(task.result, undefined);
  });

  it('relays the upstream task\'s questions and sends the answers to the same upstream task', async () => {
    const before = proxy.seen.length;
    const created = await result(gateway, 'tools/call', { name: 'confirm_delete', arguments: { filename: 'a.txt' } });
    const asking = await settle(gateway, created.taskId, 'input_required');
    assert.equal(asking.status, 'input_required', JSON.stringify(asking));
    assert.deepEqual(Object.keys(asking.inputRequests), ['confirm_delete']);
    assert.equal(asking.inputRequests.confirm_delete.method, 'elicitation/create');
    await result(gateway, 'tasks/update', {
      taskId: created.taskId,
      inputResponses: { confirm_delete: { action: 'accept', content: { confirm: true } } },
    });
    const done = await settle(gateway, created.taskId, 'completed');
    assert.equal(done.result.content[0].text, 'Deleted a.txt');

    const sent = proxy.seen.slice(before);
    assert.equal(sent.filter((m) => m.method === 'tools/call').length, 1, 'one upstream task, not a new one per round');
    const updates = sent.filter((m) => m.method === 'tasks/update');
    assert.equal(updates.length, 1);
    assert.deepEqual(updates[0].params.inputResponses, {
      confirm_delete: { action: 'accept', content: { confirm: true } },
    });
    assert.ok(sent.filter((m) => m.method === 'tasks/get').every((m) => m.params.taskId === updates[0].params.taskId));
  });

  it('cancels the upstream task when the client cancels its task', async () => {
    const before = proxy.seen.length;
    const created = await result(gateway, 'tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 60, label: 'through the gateway' },
    });
    assert.equal(created.resultType, 'task');
    // The gateway has created the upstream task once it polls it.
    await waitFor('the gateway polls its upstream task', async () =>
      proxy.seen.slice(before).some((m) => m.method === 'tasks/get'));
    const upstreamId = proxy.seen.slice(before).find((m) => m.method === 'tasks/get').params.taskId;
    const ack = await result(gateway, 'tasks/cancel', { taskId: created.taskId });
    assert.equal(ack.resultType, 'complete');
    assert.equal(ack.status, undefined);
    const local = await settle(gateway, created.taskId);
    assert.equal(local.status, 'cancelled');
    await waitFor('the upstream task is cancelled', async () =>
      proxy.seen.slice(before).some((m) => m.method === 'tasks/cancel' && m.params.taskId === upstreamId));
    // The proxy records the cancel as it forwards it, before the upstream has handled it.
    const direct = await settle(upstream, upstreamId);
    assert.equal(direct.status, 'cancelled', JSON.stringify(direct));
    // The gateway stops polling it.
    const polls = proxy.calls('tasks/get').length;
    await sleep(1200);
    assert.equal(proxy.calls('tasks/get').length, polls);
    assert.ok(upstreamTaskIds(proxy).includes(upstreamId));
  });
});

describe('gateway: tasks run by an upstream of the 2025-11-25 task model', () => {
  let gateway;

  before(async () => {
    gateway = await startHttpServer({
      packs: '',
      config: `
upstreams:
  v1:
    command: ${yamlString(NODE)}
    args: [${yamlString(TASKS_V1_UPSTREAM)}]
`,
    });
    await waitFor('the upstream tools are served', async () => {
      const listed = await result(gateway, 'tools/list', {});
      return listed.tools.some((t) => t.name === 'wait');
    });
  });

  after(async () => {
    await gateway?.stop();
  });

  // The statuses the upstream's task store recorded, from its stderr in the gateway's log.
  const upstreamStatuses = () =>
    [...gateway.logs().matchAll(/task ([0-9a-f-]{8,}) (working|completed|failed|cancelled|input_required)/g)].map(
      (m) => ({ id: m[1], status: m[2] }),
    );

  it('runs a tool that requires tasks as an upstream task (params.task) and answers its result', async () => {
    const { tools } = await result(gateway, 'tools/list', {});
    assert.equal(tools.find((t) => t.name === 'wait').execution.taskSupport, 'required');
    const created = await result(gateway, 'tools/call', { name: 'wait', arguments: { ms: 300 } });
    assert.equal(created.resultType, 'task');
    const task = await settle(gateway, created.taskId);
    assert.equal(task.status, 'completed', JSON.stringify(task));
    assert.equal(task.result.content[0].text, 'waited 300 ms');
    assert.equal(task.result._meta?.['io.modelcontextprotocol/related-task'], undefined);
    await waitFor('the upstream task completed', async () => upstreamStatuses().some((s) => s.status === 'completed'));
  });

  it('completes the task with the upstream task\'s tool error', async () => {
    const created = await result(gateway, 'tools/call', { name: 'broken', arguments: {} });
    const task = await settle(gateway, created.taskId);
    assert.equal(task.status, 'completed', JSON.stringify(task));
    assert.equal(task.result.isError, true);
    assert.match(task.result.content[0].text, /broken: as always/);
  });

  it('cancels the upstream task when the client cancels its task', async () => {
    const before = new Set(upstreamStatuses().map((s) => s.id));
    const created = await result(gateway, 'tools/call', { name: 'wait', arguments: { ms: 60000 } });
    let upstreamId;
    await waitFor('the upstream task is created', async () => {
      upstreamId = upstreamStatuses().find((s) => !before.has(s.id))?.id;
      return upstreamId !== undefined;
    });
    await result(gateway, 'tasks/cancel', { taskId: created.taskId });
    assert.equal((await settle(gateway, created.taskId)).status, 'cancelled');
    await waitFor('the upstream task is cancelled', async () =>
      upstreamStatuses().some((s) => s.id === upstreamId && s.status === 'cancelled'));
  });
});
