// An upstream MCP server of the 2025-11-25 task model only (SEP-1686: capabilities.tasks,
// params.task, tasks/get, tasks/result, tasks/cancel; no io.modelcontextprotocol/tasks
// extension), on the official TypeScript SDK's experimental tasks API, over stdio. For the
// gateway's tests (gateway_tasks.test.mjs):
//   node tasks_v1_upstream.mjs
// Tools (each requires tasks):
//   wait {ms}      completes with "waited MS ms" after ms milliseconds
//   broken {}      fails: its result is {isError: true, content: "broken: as always"}
// Every status the task store records is written to stderr as "task TASKID STATUS", so a
// test reads from the gateway's log (which carries an upstream's stderr) what became of it.
import { fileURLToPath } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { InMemoryTaskStore, InMemoryTaskMessageQueue } from '@modelcontextprotocol/sdk/experimental/tasks';
import { z } from 'zod';

export const TASKS_V1_UPSTREAM = fileURLToPath(import.meta.url);

class LoggedTaskStore extends InMemoryTaskStore {
  async createTask(...args) {
    const task = await super.createTask(...args);
    process.stderr.write(`task ${task.taskId} ${task.status}\n`);
    return task;
  }
  async storeTaskResult(taskId, status, ...rest) {
    process.stderr.write(`task ${taskId} ${status}\n`);
    return super.storeTaskResult(taskId, status, ...rest);
  }
  async updateTaskStatus(taskId, status, ...rest) {
    process.stderr.write(`task ${taskId} ${status}\n`);
    return super.updateTaskStatus(taskId, status, ...rest);
  }
}

async function main() {
  const taskStore = new LoggedTaskStore();
  const server = new McpServer(
    { name: 'tasks-v1-upstream', version: '1.0.0' },
    {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore,
      taskMessageQueue: new InMemoryTaskMessageQueue(),
    },
  );
  const handlers = (work) => ({
    async createTask(args, { taskStore: store, taskRequestedTtl }) {
      const task = await store.createTask({ ttl: taskRequestedTtl });
      (async () => {
        const [status, result] = await work(args);
        const now = await store.getTask(task.taskId);
        if (now && now.status === 'working') await store.storeTaskResult(task.taskId, status, result);
      })().catch((e) => process.stderr.write(`task ${task.taskId} error ${e.message}\n`));
      return { task };
    },
    async getTask(_args, { taskId, taskStore: store }) {
      return store.getTask(taskId);
    },
    async getTaskResult(_args, { taskId, taskStore: store }) {
      return store.getTaskResult(taskId);
    },
  });
  server.experimental.tasks.registerToolTask(
    'wait',
    { description: 'Completes after ms milliseconds', inputSchema: { ms: z.number() } },
    handlers(async ({ ms }) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return ['completed', { content: [{ type: 'text', text: `waited ${ms} ms` }] }];
    }),
  );
  server.experimental.tasks.registerToolTask(
    'broken',
    { description: 'Fails as a tool', inputSchema: { note: z.string().optional() } },
    handlers(async () => ['failed', { content: [{ type: 'text', text: 'broken: as always' }], isError: true }]),
  );
  await server.connect(new StdioServerTransport());
}

if (process.argv[1] === TASKS_V1_UPSTREAM) await main();
