// Replicas as one server (`sessions: shared`): two or three toolport replicas on one real
// redis-server. A session initialized on replica A is used on replica B (calls, resource
// subscriptions, an elicitation) while the client's GET stream stays on A, where B's
// notifications reach it through Redis; A killed with SIGKILL loses nothing (the client
// resumes its GET stream on B with Last-Event-ID); DELETE on one replica ends the session on
// all; a task started on A is polled and fetched on B; Redis going away leaves sessions
// local (/health degraded) and sharing comes back with it.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  ToolListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  startHttpServer, assertAlive, post, request, initializeSession, freePort, sleep, waitFor, LATEST, REDIS, startRedis,
  stopRedis, INIT_PARAMS, parseSse,
} from './lib/harness.mjs';

const config = (redisPort) => `
store:
  url: redis://127.0.0.1:${redisPort}
  reconnect_interval_ms: 100
  redis_timeout_ms: 500
sessions: shared
`;

// A fetch for the SDK's transport that sends each request to the replica the test picks:
// POST and DELETE to `routes.post`, the GET stream to `routes.get`.
function router(routes) {
  return (url, init) => {
    const method = (init?.method ?? 'GET').toUpperCase();
    const target = method === 'GET' ? routes.get : routes.post;
    return fetch(`${target.base}/mcp${new URL(url).search}`, init);
  };
}

async function health(server) {
  const res = await fetch(`${server.base}/health`);
  return { status: res.status, body: await res.json() };
}

describe('sessions shared by replicas through Redis', { skip: !REDIS && 'redis-server is not installed' }, () => {
  let dir;
  let redisPort;
  let redis;
  let a;
  let b;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-shared-'));
    redisPort = await freePort();
    redis = await startRedis(redisPort, dir);
    a = await startHttpServer({ config: config(redisPort) });
    b = await startHttpServer({ config: config(redisPort) });
    for (const s of [a, b]) {
      await waitFor('the replica to reach Redis', async () => (await health(s)).body.status === 'healthy');
    }
    assert.equal((await health(a)).body.services.sessions, 'shared');
  });

  after(async () => {
    await a?.stop();
    await b?.stop();
    await stopRedis(redis);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("each replica's console overview lists the replicas on the same Redis", async () => {
    const replicasOf = async (server) =>
      (await (await fetch(`${server.base}/console/api/overview`)).json()).server.replicas;
    // Every replica announces itself every 5 s; the other shows up by its next announcement.
    const seen = await waitFor('replica A to see B', async () => {
      const replicas = await replicasOf(a);
      return replicas.length === 2 ? replicas : null;
    }, 12000);
    assert.equal(seen[0].self, true);
    assert.equal(seen[1].self, false);
    assert.notEqual(seen[0].id, seen[1].id);
    assert.match(seen[1].id, /:\d+$/);  // host:pid
    assert.equal(seen[1].version, seen[0].version);
    assert.ok(seen[1].last_seen_s >= 0 && seen[1].last_seen_s <= 15, JSON.stringify(seen[1]));
    assert.ok(Number.isInteger(seen[1].started), JSON.stringify(seen[1]));
    const fromB = await waitFor('replica B to see A', async () => {
      const replicas = await replicasOf(b);
      return replicas.length === 2 ? replicas : null;
    }, 12000);
    assert.equal(fromB[1].id, seen[0].id);
  });

  it('refuses sessions: shared without the Redis store', async () => {
    const { runToolport } = await import('./lib/harness.mjs');
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'toolport-shared-cfg-'));
    const file = path.join(tmp, 'c.yaml');
    (await import('node:fs')).writeFileSync(file, 'sessions: shared\n');
    const r = await runToolport(['serve', '--config', file, '--listen', '127.0.0.1:0']);
    rmSync(tmp, { recursive: true, force: true });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /sessions: shared needs the Redis store/);
  });

  it('a session initialized on A serves calls on B (raw wire), and DELETE on B ends it on A', async () => {
    const { sessionId } = await initializeSession(a);
    const list = await post(b, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { sessionId, protocolVersion: LATEST });
    assert.equal(list.status, 200, list.text);
    assert.ok(list.messages[0].result.tools.some((t) => t.name === 'test_simple_text'));
    const call = await post(b, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } },
      { sessionId, protocolVersion: LATEST });
    assert.equal(call.messages[0].result.content[0].text, 'This is a simple text response for testing.');
    // A session id nobody created is still a 404 on every replica.
    const unknown = await post(b, { jsonrpc: '2.0', id: 4, method: 'tools/list' },
      { sessionId: 'ffffffffffffffffffffffffffffffff', protocolVersion: LATEST });
    assert.equal(unknown.status, 404);

    const del = await request(b, 'DELETE', { headers: { 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': LATEST } });
    assert.equal(del.status, 200, del.text);
    await waitFor('the session to end on A', async () => {
      const r = await post(a, { jsonrpc: '2.0', id: 5, method: 'ping' }, { sessionId, protocolVersion: LATEST });
      return r.status === 404;
    });
  });

  it("ending a session in A's console ends it on B too", async () => {
    const { sessionId } = await initializeSession(a);
    const onB = await post(b, { jsonrpc: '2.0', id: 2, method: 'ping' }, { sessionId, protocolVersion: LATEST });
    assert.equal(onB.status, 200, onB.text);
    const ended = await fetch(`${a.base}/console/api/sessions/${sessionId}`, { method: 'DELETE' });
    assert.equal(ended.status, 204, await ended.text());
    await waitFor('the session to end on B', async () => {
      const r = await post(b, { jsonrpc: '2.0', id: 3, method: 'ping' }, { sessionId, protocolVersion: LATEST });
      return r.status === 404;
    });
    const again = await post(a, { jsonrpc: '2.0', id: 4, method: 'ping' }, { sessionId, protocolVersion: LATEST });
    assert.equal(again.status, 404, 'A does not load it back from Redis');
  });

  it('the log level set on B holds on A', async () => {
    const { sessionId } = await initializeSession(a);
    const set = await post(b, { jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'error' } },
      { sessionId, protocolVersion: LATEST });
    assert.equal(set.status, 200, set.text);
    // test_tool_with_logging logs at info: below the session's level now, on either replica.
    // A applies the change when the bus delivers it, not before B's answer (docs/replicas.md,
    // "Limits"): a call sent to A at once may still see the old level, a later one may not.
    let last = '';
    await waitFor('A to apply the level set on B', async () => {
      const call = await post(a, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'test_tool_with_logging', arguments: {} } },
        { sessionId, protocolVersion: LATEST });
      assert.equal(call.status, 200, call.text);
      assert.ok(call.messages.find((m) => m.id === 3)?.result, call.text);
      last = call.text;
      return call.messages.filter((m) => m.method === 'notifications/message').length === 0;
    }).catch((e) => assert.fail(`${e.message}; the last call's reply: ${last}`));
  });

  it('a task started on A is polled and fetched on B', async () => {
    const capabilities = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
    const init = await post(a, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { ...INIT_PARAMS(LATEST), capabilities } });
    const sessionId = init.headers.get('mcp-session-id');
    await post(a, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId, protocolVersion: LATEST });
    const created = await post(a, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0.5, label: 'shared' } } },
      { sessionId, protocolVersion: LATEST });
    const taskId = created.messages[0].result.taskId;
    assert.ok(taskId, created.text);
    let record;
    await waitFor('the task to complete, seen from B', async () => {
      const got = await post(b, { jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { taskId } }, { sessionId, protocolVersion: LATEST });
      assert.equal(got.status, 200, got.text);
      record = got.messages[0].result;
      assert.ok(record, got.text);
      assert.ok(record.status === 'working' || record.status === 'completed', got.text);
      return record.status === 'completed';
    });
    assert.equal(record.result.content[0].text, 'Computed shared after 0.5 s');
    // Another session does not see it, on either replica.
    const other = await initializeSession(b);
    const hidden = await post(b, { jsonrpc: '2.0', id: 4, method: 'tasks/get', params: { taskId, _meta: { 'io.modelcontextprotocol/clientCapabilities': capabilities } } },
      { sessionId: other.sessionId, protocolVersion: LATEST });
    assert.ok(hidden.messages[0].error, hidden.text);
  });

  it("B's console lists a task A runs and cancels it there: A's call stops", async () => {
    const capabilities = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
    const init = await post(a, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { ...INIT_PARAMS(LATEST), capabilities } });
    const sessionId = init.headers.get('mcp-session-id');
    await post(a, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId, protocolVersion: LATEST });
    const created = await post(a, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 60, label: 'far' } } },
      { sessionId, protocolVersion: LATEST });
    const taskId = created.messages[0].result.taskId;
    assert.ok(taskId, created.text);
    const listedOn = async (server) => (await (await fetch(`${server.base}/console/api/tasks`)).json()).tasks.find((t) => t.id === taskId);
    const onA = await waitFor('the task in A\'s console', () => listedOn(a));
    assert.equal(onA.replica, 'this');
    assert.equal(onA.session, sessionId);
    const onB = await waitFor('the task in B\'s console', () => listedOn(b));
    assert.deepEqual({ replica: onB.replica, tool: onB.tool, status: onB.status, session: onB.session },
      { replica: 'another', tool: 'slow_compute', status: 'working', session: '' });

    const cancelled = await fetch(`${b.base}/console/api/tasks/${taskId}/cancel`, { method: 'POST' });
    assert.equal(cancelled.status, 202, await cancelled.text());
    // The record says so everywhere...
    const got = await post(a, { jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { taskId } }, { sessionId, protocolVersion: LATEST });
    assert.equal(got.messages[0].result.status, 'cancelled', got.text);
    assert.equal(got.messages[0].result.statusMessage, 'Cancelled by an operator');
    // ...and A stopped the call (it would run for a minute): A lists it no more.
    await waitFor('A to stop the call', async () => !(await listedOn(a)), 5000);
    assert.equal(await listedOn(b), undefined);
    const again = await fetch(`${b.base}/console/api/tasks/${taskId}/cancel`, { method: 'POST' });
    assert.equal(again.status, 404);
  });

  it("a client's reply and cancellation that reach the other replica are relayed to the one they are for", async () => {
    const init = await post(a, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { ...INIT_PARAMS(LATEST), capabilities: { elicitation: {} } } });
    const sessionId = init.headers.get('mcp-session-id');
    await post(a, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId, protocolVersion: LATEST });
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': LATEST };

    // B runs the call and asks the client on the call's stream; the client answers on A.
    const res = await fetch(`${b.base}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 'e1', method: 'tools/call', params: { name: 'test_elicitation', arguments: { message: 'Name?' } } }) });
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const messages = [];
    const next = async (predicate) => {
      for (;;) {
        const found = messages.find(predicate);
        if (found) return found;
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended: ${text}`);
        text += decoder.decode(value, { stream: true });
        let end;
        while ((end = text.indexOf('\n\n')) >= 0) {
          const data = text.slice(0, end).split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('');
          text = text.slice(end + 2);
          if (data) messages.push(JSON.parse(data));
        }
      }
    };
    const question = await next((m) => m.method === 'elicitation/create');
    assert.ok(question.id > 2 ** 32, `requests of a shared session are numbered in the replica's own range: ${question.id}`);
    const answer = await post(a, { jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: { response: 'Ada' } } }, { sessionId, protocolVersion: LATEST });
    assert.equal(answer.status, 202, answer.text);
    const reply = await next((m) => m.id === 'e1');
    assert.match(reply.result.content[0].text, /action=accept/);
    assert.match(reply.result.content[0].text, /Ada/);

    // B runs a 5 s call; the client cancels it on A.
    const started = Date.now();
    const slow = post(b, { jsonrpc: '2.0', id: 's1', method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 5 } } }, { sessionId, protocolVersion: LATEST });
    await sleep(300);
    const cancel = await post(a, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 's1', reason: 'changed my mind' } }, { sessionId, protocolVersion: LATEST });
    assert.equal(cancel.status, 202, cancel.text);
    const ended = await slow;
    assert.ok(Date.now() - started < 4000, `the call ended on the cancellation, not after 5 s: ${ended.text}`);
    assert.ok(!ended.messages.some((m) => m.id === 's1' && m.result), ended.text);
  });

  it("a POST's response stream closed on B (SSE polling) is resumed on A with Last-Event-ID", async () => {
    const { sessionId } = await initializeSession(a);
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': LATEST };
    // test_reconnection closes its stream at once and answers 100 ms later.
    const res = await fetch(`${b.base}/mcp`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 'r1', method: 'tools/call', params: { name: 'test_reconnection', arguments: {} } }) });
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const closed = await res.text();
    const ids = [...closed.matchAll(/^id: ?(\S+)$/gm)].map((m) => m[1]);
    assert.ok(ids.length >= 1, closed);
    assert.ok(!closed.includes('"id":"r1"'), `the reply came before the stream closed: ${closed}`);
    const lastId = ids.at(-1);
    assert.ok(Number(lastId.split('-')[0]) > 2 ** 24, `streams of a shared session are numbered in the replica's own range: ${lastId}`);
    await sleep(300);  // the call has ended on B meanwhile
    const resumed = await fetch(`${a.base}/mcp`, { headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': LATEST, 'Last-Event-ID': lastId }, signal: AbortSignal.timeout(5000) });
    assert.equal(resumed.status, 200);
    const text = await resumed.text();  // the stream ends once its reply is sent
    const reply = parseSse(text).filter((e) => e.data).map((e) => JSON.parse(e.data)).find((m) => m.id === 'r1');
    assert.ok(reply?.result, text);
    assert.match(reply.result.content[0].text, /Reconnection test completed successfully/);
    // A stream no replica mirrored is unknown on every replica.
    const unknown = await fetch(`${a.base}/mcp`, { headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': LATEST, 'Last-Event-ID': '999999999-1' } });
    assert.equal(unknown.status, 404);
  });

  it("a task started on A is answered on B (tasks/update relayed to A, which runs it)", async () => {
    const capabilities = { elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } };
    const init = await post(a, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { ...INIT_PARAMS(LATEST), capabilities } });
    const sessionId = init.headers.get('mcp-session-id');
    await post(a, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId, protocolVersion: LATEST });
    const created = await post(a, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'confirm_delete', arguments: { filename: 'x.txt' } } },
      { sessionId, protocolVersion: LATEST });
    const taskId = created.messages[0].result.taskId;
    assert.ok(taskId, created.text);
    const get = async () => (await post(b, { jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { taskId } }, { sessionId, protocolVersion: LATEST })).messages[0].result;
    let record;
    await waitFor('the task to ask, seen from B', async () => (record = await get()).status === 'input_required');
    assert.deepEqual(Object.keys(record.inputRequests), ['confirm_delete']);
    const update = await post(b, { jsonrpc: '2.0', id: 4, method: 'tasks/update', params: { taskId, inputResponses: { confirm_delete: { action: 'accept', content: { confirm: true } } } } },
      { sessionId, protocolVersion: LATEST });
    assert.equal(update.status, 200, update.text);
    await waitFor('the task to complete with the answer from B', async () => (record = await get()).status === 'completed');
    assert.equal(record.result.content[0].text, 'Deleted x.txt');
  });

  it('SDK client, 2025-11-25 tasks: started on A; polled, listed, answered and fetched on B', async () => {
    const routes = { post: a, get: a };
    const transport = new StreamableHTTPClientTransport(new URL(`${a.base}/mcp`), { fetch: router(routes) });
    const client = new Client({ name: 'shared-tasks', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    const asked = [];
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      return { action: 'accept', content: { confirm: true } };
    });
    await client.connect(transport);
    assert.ok(client.getServerCapabilities()?.tasks?.requests?.tools?.call);

    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0.5, label: 'ab' }, task: { ttl: 60000 } } },
      CreateTaskResultSchema,
    );
    routes.post = b;
    let seen;
    await waitFor('the task completed, polled on B', async () => (seen = await client.experimental.tasks.getTask(task.taskId)).status === 'completed');
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    assert.deepEqual(result.content, [{ type: 'text', text: 'Computed ab after 0.5 s' }]);
    const listed = await client.experimental.tasks.listTasks();
    assert.ok(listed.tasks.some((t) => t.taskId === task.taskId));

    // A task that asks: created on A, its question asked by B (from the task's record) during
    // tasks/result, the answer relayed to A, which finishes it; the result comes through B.
    routes.post = a;
    const { task: asking } = await client.request(
      { method: 'tools/call', params: { name: 'confirm_delete', arguments: { filename: 'shared.txt' }, task: { ttl: 60000 } } },
      CreateTaskResultSchema,
    );
    routes.post = b;
    await waitFor('the task to ask', async () => (await client.experimental.tasks.getTask(asking.taskId)).status === 'input_required');
    const answered = await client.experimental.tasks.getTaskResult(asking.taskId, CallToolResultSchema);
    assert.deepEqual(answered.content, [{ type: 'text', text: 'Deleted shared.txt' }]);
    assert.equal(asked.length, 1);
    assert.equal(asked[0]._meta?.['io.modelcontextprotocol/related-task']?.taskId, asking.taskId);
    await client.close();
  });

  it('SDK client: calls, a subscription and an elicitation on B, notifications on its GET stream on A; A killed, the session goes on on B', async () => {
    const routes = { post: a, get: a };
    const transport = new StreamableHTTPClientTransport(new URL(`${a.base}/mcp`), {
      fetch: router(routes),
      reconnectionOptions: { initialReconnectionDelay: 50, maxReconnectionDelay: 200, reconnectionDelayGrowFactor: 1.5, maxRetries: 20 },
    });
    const client = new Client({ name: 'shared-test', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { username: 'ada', email: 'ada@example.com' } }));
    const listChanged = [];
    const updated = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => listChanged.push(Date.now()));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updated.push(n.params.uri));
    await client.connect(transport);
    const sessionId = transport.sessionId;
    assert.ok(sessionId);
    // The GET stream opens on A after initialized; from now on requests go to B.
    await sleep(200);
    routes.post = b;

    const tools = await client.listTools();
    assert.ok(tools.tools.some((t) => t.name === 'test_elicitation'));
    const text = await client.callTool({ name: 'test_simple_text', arguments: {} });
    assert.equal(text.content[0].text, 'This is a simple text response for testing.');
    const elicited = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
    assert.match(elicited.content[0].text, /action=accept/);
    assert.match(elicited.content[0].text, /ada/);

    // Made on B, where the tool list changes: delivered on A's GET stream through Redis.
    await client.callTool({ name: 'test_trigger_tool_change', arguments: {} });
    await waitFor('tools/list_changed from B on the GET stream held on A', async () => listChanged.length >= 1);

    // Subscribed on B: an update announced on B reaches A's GET stream through Redis, and
    // A, told of the subscription, announces its own.
    await client.subscribeResource({ uri: 'test://watched-resource' });
    await client.callTool({ name: 'test_trigger_resource_update', arguments: {} });
    await waitFor('resources/updated from B on the GET stream', async () => updated.length === 1);
    routes.post = a;
    await client.callTool({ name: 'test_trigger_resource_update', arguments: {} });
    await waitFor('resources/updated from A on the GET stream', async () => updated.length === 2);
    routes.post = b;
    await client.unsubscribeResource({ uri: 'test://watched-resource' });
    // B saves the change before answering, but A applies it when the Redis bus delivers
    // it, which can be after the client's next request reaches A: let it arrive first.
    await sleep(300);
    routes.post = a;
    await client.callTool({ name: 'test_trigger_resource_update', arguments: {} });
    routes.post = b;
    await sleep(200);
    assert.deepEqual(updated, ['test://watched-resource', 'test://watched-resource']);

    // Replica A dies mid-session: its GET stream breaks, the client comes back on B with
    // Last-Event-ID, and everything goes on there.
    routes.get = b;
    a.child.kill('SIGKILL');
    await waitFor('A to exit', async () => a.exited() !== null);
    const seen = listChanged.length;
    const again = await client.callTool({ name: 'test_simple_text', arguments: {} });
    assert.equal(again.content[0].text, 'This is a simple text response for testing.');
    await sleep(500);  // the client's GET reconnects to B meanwhile
    await client.callTool({ name: 'test_trigger_tool_change', arguments: {} });
    await waitFor('tools/list_changed on the GET stream resumed on B', async () => listChanged.length > seen);
    assert.equal(transport.sessionId, sessionId);
    await client.close();
    assertAlive(b);
    a = await startHttpServer({ config: config(redisPort) });  // for the tests after
  });

  it('a task whose replica is killed ends as failed, seen from the other replica', async () => {
    const doomed = await startHttpServer({ config: config(redisPort) });
    await waitFor('the replica to reach Redis', async () => (await health(doomed)).body.status === 'healthy');
    const capabilities = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
    const init = await post(doomed, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { ...INIT_PARAMS(LATEST), capabilities } });
    const sessionId = init.headers.get('mcp-session-id');
    await post(doomed, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId, protocolVersion: LATEST });
    const created = await post(doomed, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 60 } } },
      { sessionId, protocolVersion: LATEST });
    const taskId = created.messages[0].result.taskId;
    assert.ok(taskId, created.text);
    const get = async () => (await post(b, { jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { taskId } }, { sessionId, protocolVersion: LATEST })).messages[0].result;
    assert.equal((await get()).status, 'working');
    doomed.child.kill('SIGKILL');
    await waitFor('A to exit', async () => doomed.exited() !== null);
    let record;
    await waitFor('B to see the task failed', async () => (record = await get()).status === 'failed', 10000);
    assert.equal(record.error.code, -32603);
    assert.match(record.error.message, /replica running this task stopped/);
    await doomed.stop();
  });

  it('Redis away: sessions stay local (/health degraded); back: sessions are shared again', async () => {
    const before = await initializeSession(a);
    await stopRedis(redis);
    await waitFor('B to see Redis gone', async () => (await health(b)).body.status === 'degraded');
    assert.equal((await health(b)).body.services.sessions, 'local only (Redis unreachable)');
    // A session B already knows goes on; a new one is B's own.
    const known = await post(a, { jsonrpc: '2.0', id: 7, method: 'ping' }, { sessionId: before.sessionId, protocolVersion: LATEST });
    assert.equal(known.status, 200, known.text);
    const local = await initializeSession(b);
    const ping = await post(b, { jsonrpc: '2.0', id: 8, method: 'ping' }, { sessionId: local.sessionId, protocolVersion: LATEST });
    assert.equal(ping.status, 200, ping.text);
    assertAlive(a);
    assertAlive(b);

    redis = await startRedis(redisPort, dir);
    for (const s of [a, b]) {
      await waitFor('the replica to use Redis again', async () => (await health(s)).body.status === 'healthy');
    }
    const fresh = await initializeSession(b);
    const across = await post(a, { jsonrpc: '2.0', id: 9, method: 'tools/list' }, { sessionId: fresh.sessionId, protocolVersion: LATEST });
    assert.equal(across.status, 200, across.text);
  });
});
