// The four clients of the real-client matrix (client_matrix.test.mjs), each behind one small
// interface so that every source's case table runs unchanged through every client:
//
//   const session = await CLIENT.open(target);   // target: {url} or {command, args, env}
//   const tools = await session.list();          // the first tools/list, as the client saw it
//   const outcome = await session.call(tool, name, args);
//   await session.close();
//
// An outcome is what the client made of the call:
//   {kind: 'result', result}            the client accepted a CallToolResult (isError or not);
//   {kind: 'rpc-error', code, message}  the server answered with a JSON-RPC error;
//   {kind: 'client-error', message}     the client itself refused the answer (schema mismatch,
//                                       protocol error, a crash of the CLI): always a failure.
//
// The SDK clients list first and then validate every structuredContent against the tool's
// outputSchema, as hosts do; they declare sampling, elicitation and roots and answer them the
// way a permissive host would. The two CLIs start a process per call (and, over stdio, a
// server per call): that is how people run them.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Http1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport as Stdio1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as Client2, StreamableHTTPClientTransport as Http2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as Stdio2 } from '@modelcontextprotocol/client/stdio';
import { SANITIZER_REPORT, instrumentTransport, runCommand as run, runToolport } from './harness.mjs';

const require = createRequire(import.meta.url);
const INSPECTOR = require.resolve('@modelcontextprotocol/inspector/clients/launcher/build/index.js');
const CLIENT_INFO = { name: 'toolport-client-matrix', version: '1.0.0' };
const CALL_TIMEOUT_MS = 30000;

// A host's answers to the server's requests: the model echoes the last message, the user
// accepts with a value for every field the form asks for, the roots are the working folder.
function formAnswer(schema) {
  const content = {};
  for (const [key, prop] of Object.entries(schema?.properties ?? {})) {
    if (prop.default !== undefined) content[key] = prop.default;
    else if (prop.enum) content[key] = prop.enum[0];
    else if (prop.oneOf?.[0]?.const !== undefined) content[key] = prop.oneOf[0].const;
    else if (prop.type === 'boolean') content[key] = true;
    else if (prop.type === 'number' || prop.type === 'integer') content[key] = prop.minimum ?? 1;
    else if (prop.type === 'array') content[key] = [];
    else content[key] = 'matrix';
  }
  return { action: 'accept', content };
}
const sampleAnswer = (request) => ({
  role: 'assistant',
  model: 'matrix-model',
  content: { type: 'text', text: `sampled: ${request.params.messages.at(-1)?.content?.text ?? ''}` },
});
const rootsAnswer = () => ({ roots: [{ uri: `file://${os.tmpdir()}`, name: 'tmp' }] });

// What the SDK did with one tools/call: the wire tells a server's JSON-RPC error from the
// client's own refusal of an answer that arrived.
async function sdkCall(wire, invoke) {
  const before = wire.sent.length;
  try {
    return { kind: 'result', result: await invoke() };
  } catch (error) {
    const request = wire.sent.slice(before).find((m) => m.method === 'tools/call' || m.method === 'tasks/result');
    const answer = request && wire.received.find((m) => m.id === request.id && !('method' in m));
    if (answer?.error) return { kind: 'rpc-error', code: answer.error.code, message: answer.error.message };
    return { kind: 'client-error', message: `${error.code ?? ''} ${error.message}`.trim() };
  }
}

const stdioParams = (target) => ({
  command: target.command,
  args: target.args,
  env: { ...process.env, ...target.env },
  stderr: 'pipe',
});

// Keeps what a stdio server writes on stderr, and returns a check that it holds no sanitizer
// report (the ASan pass runs the matrix too), for the session's close().
function watchStderr(transport) {
  let text = '';
  transport.stderr?.setEncoding('utf8');
  transport.stderr?.on('data', (chunk) => {
    text = (text + chunk).slice(-20000);
  });
  return () => {
    if (SANITIZER_REPORT.test(text)) throw new Error(`sanitizer report from the stdio server:\n${text}`);
  };
}

export const SDK1 = {
  name: 'sdk-1.x',
  // Tasks through client.experimental.tasks, for the tools that require one.
  capabilities: new Set(['sampling', 'elicitation', 'roots', 'tasks']),
  async open(target) {
    const client = new Client1(CLIENT_INFO, { capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, sampleAnswer);
    client.setRequestHandler(ElicitRequestSchema, (request) => formAnswer(request.params.requestedSchema));
    client.setRequestHandler(ListRootsRequestSchema, rootsAnswer);
    const transport = target.url ? new Http1(new URL(target.url)) : new Stdio1(stdioParams(target));
    const sanitizerCheck = target.url ? () => {} : watchStderr(transport);
    await client.connect(transport);
    const wire = instrumentTransport(transport);
    return {
      async list() {
        return (await client.listTools()).tools;
      },
      call(tool, name, args) {
        return sdkCall(wire, async () => {
          // A tool that requires a task cannot go through callTool in 1.x (it refuses it
          // client-side); a host calls it through the tasks API and waits for the result.
          if (tool?.execution?.taskSupport === 'required') {
            const stream = client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, { timeout: CALL_TIMEOUT_MS });
            let taskId;
            for await (const message of stream) {
              if (message.type === 'taskCreated') taskId = message.task.taskId;
              if (message.type === 'result') return message.result;
              // A failed task still has its result (the tool's error), which a host shows.
              if (message.type === 'error') {
                if (!taskId) throw message.error;
                return client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
              }
            }
            throw new Error('the task stream ended without a result');
          }
          return client.callTool({ name, arguments: args }, CallToolResultSchema, { timeout: CALL_TIMEOUT_MS });
        });
      },
      async close() {
        await client.close();
        sanitizerCheck();
      },
    };
  },
};

export const SDK2 = {
  name: 'sdk-2.x',
  capabilities: new Set(['sampling', 'elicitation', 'roots']),
  async open(target) {
    const client = new Client2(CLIENT_INFO, { capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} } });
    client.setRequestHandler('sampling/createMessage', sampleAnswer);
    client.setRequestHandler('elicitation/create', (request) => formAnswer(request.params.requestedSchema));
    client.setRequestHandler('roots/list', rootsAnswer);
    const transport = target.url ? new Http2(new URL(target.url)) : new Stdio2(stdioParams(target));
    const sanitizerCheck = target.url ? () => {} : watchStderr(transport);
    await client.connect(transport);
    const wire = instrumentTransport(transport);
    return {
      async list() {
        return (await client.listTools()).tools;
      },
      call(_tool, name, args) {
        return sdkCall(wire, () => client.callTool({ name, arguments: args }, { timeout: CALL_TIMEOUT_MS }));
      },
      async close() {
        await client.close();
        sanitizerCheck();
      },
    };
  },
};


const tail = (text) => text.trim().split('\n').slice(-3).join(' | ').slice(0, 600);

// The Inspector CLI 2.x (`mcp-inspector --cli`), one process per method, JSON output. Its
// catalog, client config and secrets go to a private HOME, never the user's.
export const INSPECTOR_CLI = {
  name: 'inspector-cli',
  capabilities: new Set(),
  // A Node process per call (about a second each): it runs the cases marked `inspector`.
  subset: true,
  processPerCommand: true,
  async open(target) {
    const home = mkdtempSync(path.join(os.tmpdir(), 'toolport-matrix-inspector-'));
    // A stdio server gets its environment with -e, as in a host's config (the Inspector does
    // not pass its own on).
    const serverEnv = Object.entries(target.env ?? {}).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    const where = target.url ? ['--transport', 'http', '--server-url', target.url] : [...serverEnv, '--', target.command, ...target.args];
    const env = { HOME: home, MCP_CATALOG_PATH: path.join(home, 'mcp.json') };
    const inspector = (method, extra = []) =>
      run(process.execPath, [INSPECTOR, '--cli', '--format', 'json', '-q', '--connect-timeout', '20000', '--method', method, ...extra, ...where], { env });
    return {
      async list() {
        const out = await inspector('tools/list');
        if (out.status !== 0) throw new Error(`inspector tools/list exited ${out.status}: ${tail(out.stderr || out.stdout)}`);
        return JSON.parse(out.stdout).result.tools;
      },
      async call(_tool, name, args) {
        const out = await inspector('tools/call', ['--tool-name', name, '--tool-args-json', JSON.stringify(args)]);
        // 0: a result; 5: a result with isError (printed the same way), or a refusal of the
        // Inspector's own (e.g. tool_not_found, from its listing) with nothing on stdout.
        if ((out.status === 0 || out.status === 5) && out.stdout.trim().startsWith('{')) {
          const parsed = JSON.parse(out.stdout);
          if (parsed.result) return { kind: 'result', result: parsed.result };
        }
        const envelope = /\{"error":.*\}/s.exec(out.stderr || out.stdout)?.[0];
        const error = envelope ? JSON.parse(envelope).error : null;
        const rpc = /MCP error (-?\d+)/.exec(error?.message ?? '');
        if (rpc) return { kind: 'rpc-error', code: Number(rpc[1]), message: error.message };
        return { kind: 'client-error', message: `exit ${out.status}: ${error ? JSON.stringify(error) : tail(out.stderr || out.stdout)}` };
      },
      close: async () => {},
    };
  },
};

// `toolport list` / `toolport call --json`, the binary's own client. Over stdio it starts the
// server command itself (one word list, never a shell).
export const TOOLPORT_CLI = {
  name: 'toolport-cli',
  capabilities: new Set(['elicitation']),
  processPerCommand: true,
  async open(target) {
    // --stdio takes one command line, split into words as a shell would: quote each word.
    const quote = (word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`);
    const where = target.url ? ['--url', target.url] : ['--stdio', [target.command, ...target.args].map(quote).join(' ')];
    const env = target.env ?? {};
    return {
      async list() {
        const out = await runToolport(['list', '--json', ...where], { env });
        if (out.status !== 0) throw new Error(`toolport list exited ${out.status}: ${tail(out.stderr)}`);
        const parsed = JSON.parse(out.stdout);
        return Array.isArray(parsed) ? parsed : parsed.tools;
      },
      async call(_tool, name, args) {
        const out = await runToolport(['call', name, JSON.stringify(args), '--json', '--elicitation', 'defaults', '--timeout-ms', String(CALL_TIMEOUT_MS), ...where], { env });
        if (SANITIZER_REPORT.test(out.stderr)) return { kind: 'client-error', message: `sanitizer report:\n${out.stderr}` };
        // 0: a result; 1: a result with isError.
        if ((out.status === 0 || out.status === 1) && out.stdout.trim().startsWith('{')) {
          return { kind: 'result', result: JSON.parse(out.stdout) };
        }
        const rpc = /error (-3\d{4})\b/.exec(out.stderr);
        if (rpc) return { kind: 'rpc-error', code: Number(rpc[1]), message: tail(out.stderr) };
        return { kind: 'client-error', message: `exit ${out.status}: ${tail(out.stderr)}` };
      },
      close: async () => {},
    };
  },
};

export const CLIENTS = [SDK1, SDK2, INSPECTOR_CLI, TOOLPORT_CLI];
