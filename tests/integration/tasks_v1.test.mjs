// The task model of revision 2025-11-25 (SEP-1686) as the official MCP TypeScript SDK's
// client drives it (client.experimental.tasks), against `toolport serve --packs conformance`
// over Streamable HTTP: task-augmented tools/call, tasks/get, tasks/result (blocking, and
// asking the client for input on its own stream), tasks/list, tasks/cancel, and the
// notifications/tasks/status the creating session is sent.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startHttpServer, assertAlive, waitFor } from './lib/harness.mjs';

const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const TASK = { ttl: 60000 };

// Every message of a callToolStream, in order.
async function drain(stream) {
  const messages = [];
  for await (const message of stream) messages.push(message);
  return messages;
}

describe('SDK client and the 2025-11-25 task model', () => {
  let server;
  let client;
  let transport;
  const errors = [];
  const statuses = [];
  const elicitations = [];

  const statusesOf = (taskId) => statuses.filter((s) => s.taskId === taskId).map((s) => s.status);

  before(async () => {
    // Small pages (tasks/list is paged like every list) and quick polling.
    server = await startHttpServer({
      config: 'server:\n  page_size: 2\n  task_poll_interval_ms: 100\n  task_ttl_ms: 120000\n',
    });
    transport = new StreamableHTTPClientTransport(new URL(server.url));
    client = new Client({ name: 'toolport-it-tasks-v1', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.onerror = (e) => errors.push(e);
    client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
      statuses.push(n.params);
    });
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      elicitations.push(req.params);
      return { action: 'accept', content: { confirm: true } };
    });
    await client.connect(transport);
  });

  after(async () => {
    await client?.close().catch(() => {});
    await server?.stop();
  });

  it('negotiates 2025-11-25 and is offered tasks for tools/call', async () => {
    assert.equal(transport.protocolVersion, '2025-11-25');
    assert.deepEqual(client.getServerCapabilities()?.tasks, {
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const tools = [];
    let cursor;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined);
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
    assert.equal(support.slow_compute, 'optional');
    assert.equal(support.failing_job, 'required');
    assert.equal(support.confirm_delete, 'optional');
    assert.equal(support.greet, undefined);
  });

  it('runs a tool as a task: created, polled, its result through tasks/result, a status notification', async () => {
    const messages = await drain(
      client.experimental.tasks.callToolStream(
        { name: 'slow_compute', arguments: { seconds: 0.5, label: 'v1' } },
        CallToolResultSchema,
        { task: TASK },
      ),
    );
    const created = messages.find((m) => m.type === 'taskCreated');
    assert.ok(created, JSON.stringify(messages));
    const { taskId } = created.task;
    assert.equal(created.task.status, 'working');
    assert.equal(created.task.ttl, 60000);
    assert.equal(created.task.pollInterval, 100);
    assert.match(created.task.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    const last = messages.at(-1);
    assert.equal(last.type, 'result', JSON.stringify(messages));
    assert.deepEqual(last.result.content, [{ type: 'text', text: 'Computed v1 after 0.5 s' }]);
    assert.deepEqual(last.result._meta?.[RELATED_TASK], { taskId });

    const task = await client.experimental.tasks.getTask(taskId);
    assert.equal(task.status, 'completed');
    assert.equal(task.taskId, taskId);
    await waitFor('the completed status notification', () => statusesOf(taskId).includes('completed'));
  });

  it('blocks tasks/result until the task ends', async () => {
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 1, label: 'wait' }, task: TASK } },
      CreateTaskResultSchema,
    );
    assert.equal(task.status, 'working');
    const started = Date.now();
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    assert.ok(Date.now() - started >= 700, `tasks/result answered after ${Date.now() - started} ms`);
    assert.deepEqual(result.content, [{ type: 'text', text: 'Computed wait after 1 s' }]);
    assert.equal(result._meta[RELATED_TASK].taskId, task.taskId);
  });

  it('asks the client for input on the tasks/result stream while the task waits for it', async () => {
    const before = elicitations.length;
    const messages = await drain(
      client.experimental.tasks.callToolStream(
        { name: 'confirm_delete', arguments: { filename: 'notes.txt' } },
        CallToolResultSchema,
        { task: TASK },
      ),
    );
    const taskId = messages.find((m) => m.type === 'taskCreated')?.task.taskId;
    assert.ok(taskId, JSON.stringify(messages));
    assert.ok(
      messages.some((m) => m.type === 'taskStatus' && m.task.status === 'input_required'),
      JSON.stringify(messages),
    );
    const last = messages.at(-1);
    assert.equal(last.type, 'result', JSON.stringify(messages));
    assert.deepEqual(last.result.content, [{ type: 'text', text: 'Deleted notes.txt' }]);
    assert.equal(last.result._meta[RELATED_TASK].taskId, taskId);

    assert.equal(elicitations.length, before + 1);
    const asked = elicitations.at(-1);
    assert.equal(asked.message, 'Delete notes.txt?');
    assert.deepEqual(asked._meta?.[RELATED_TASK], { taskId });
    await waitFor('the completed status notification', () => statusesOf(taskId).includes('completed'));
    const seen = statusesOf(taskId);
    assert.ok(seen.indexOf('input_required') < seen.indexOf('working'), seen.join(','));
    assert.equal((await client.experimental.tasks.getTask(taskId)).status, 'completed');
  });

  it('fails a task whose tool reports an error, and tasks/result gives that result', async () => {
    const messages = await drain(
      client.experimental.tasks.callToolStream({ name: 'failing_job', arguments: {} }, CallToolResultSchema, {
        task: TASK,
      }),
    );
    const taskId = messages.find((m) => m.type === 'taskCreated')?.task.taskId;
    assert.ok(taskId);
    assert.equal(messages.at(-1).type, 'error');
    const task = await client.experimental.tasks.getTask(taskId);
    assert.equal(task.status, 'failed');
    assert.match(task.statusMessage, /The job failed/);
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    assert.equal(result.isError, true);
    assert.equal(result._meta[RELATED_TASK].taskId, taskId);
    await waitFor('the failed status notification', () => statusesOf(taskId).includes('failed'));
  });

  it('answers -32601 when a tool and params.task disagree', async () => {
    // A tool without task support, asked for as a task.
    const greet = await drain(
      client.experimental.tasks.callToolStream({ name: 'greet', arguments: { name: 'x' } }, CallToolResultSchema, {
        task: TASK,
      }),
    );
    assert.equal(greet.at(-1).type, 'error');
    assert.equal(greet.at(-1).error.code, -32601, String(greet.at(-1).error));
    // A tool that requires tasks, called without (the SDK's callTool refuses that itself).
    await assert.rejects(
      client.request({ method: 'tools/call', params: { name: 'failing_job', arguments: {} } }, CallToolResultSchema),
      (e) => e.code === -32601 && /must be called as a task/.test(e.message),
    );
    // An optional one without params.task runs in its request.
    const plain = await client.callTool({ name: 'slow_compute', arguments: { seconds: 0, label: 'sync' } });
    assert.deepEqual(plain.content, [{ type: 'text', text: 'Computed sync after 0 s' }]);
  });

  it('lists the session\'s tasks page by page', async () => {
    const ids = new Set();
    let cursor;
    let pages = 0;
    do {
      const page = await client.experimental.tasks.listTasks(cursor);
      assert.ok(page.tasks.length <= 2);
      for (const t of page.tasks) {
        assert.equal(typeof t.createdAt, 'string');
        ids.add(t.taskId);
      }
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    // Five tasks so far (slow_compute twice, confirm_delete, failing_job twice: once by callToolStream).
    assert.ok(ids.size >= 4, `${ids.size} tasks listed`);
    assert.ok(pages >= 2);
    await assert.rejects(client.experimental.tasks.listTasks('no-such-cursor'), (e) => e.code === -32602);
  });

  it('cancels a working task and refuses to cancel it again', async () => {
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 30 }, task: TASK } },
      CreateTaskResultSchema,
    );
    const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
    assert.equal(cancelled.taskId, task.taskId);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal((await client.experimental.tasks.getTask(task.taskId)).status, 'cancelled');
    await assert.rejects(client.experimental.tasks.cancelTask(task.taskId), (e) => e.code === -32602);
    await assert.rejects(client.experimental.tasks.getTask('unknown-task'), (e) => e.code === -32602);
    await waitFor('the cancelled status notification', () => statusesOf(task.taskId).includes('cancelled'));
  });

  it('stays healthy', () => {
    assertAlive(server);
    assert.deepEqual(errors, []);
  });
});
