// An MCP server offering SEP-2624 interceptors (interceptors/list, interceptor/invoke) over
// stdio, for the guard tests: the official SDK's low-level Server with the two methods as
// custom request handlers. Run as a child over stdio (`node interceptor_server.mjs`), or
// served over Streamable HTTP from the test's own process (listenHttp()).
//
//   pii-validator  validation, tools/call request: invalid (severity error) when the
//                  arguments hold an SSN (ddd-dd-dddd)
//   redactor       mutation, tools/call request and response: SSNs in the arguments become
//                  "[ssn]", and "simple" in a result's text becomes "[mutated]"
//   audit-logger   validation in audit mode, both phases: always invalid (must not block)
//   flaky          validation, request, failOpen: true: always fails (must not block)
//   broken         validation, request, failOpen: false: always fails (blocks)
//   liar           mutation, request: says modified: false but changes the payload (malformed)
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export const INTERCEPTOR_SERVER = fileURLToPath(import.meta.url);

const SSN = /\b\d{3}-\d{2}-\d{4}\b/g;
const both = [
  { events: ['tools/call'], phase: 'request' },
  { events: ['tools/call'], phase: 'response' },
];
const INTERCEPTORS = [
  { name: 'pii-validator', type: 'validation', hooks: [both[0]] },
  { name: 'redactor', type: 'mutation', hooks: both, priorityHint: { request: -100, response: 100 } },
  { name: 'audit-logger', type: 'validation', mode: 'audit', hooks: [{ events: ['*'], phase: 'request' }, { events: ['*'], phase: 'response' }] },
  { name: 'flaky', type: 'validation', failOpen: true, hooks: [both[0]] },
  { name: 'broken', type: 'validation', failOpen: false, hooks: [both[0]] },
  { name: 'liar', type: 'mutation', hooks: [both[0]] },
];

function invoke({ name, phase, payload }) {
  const echo = { interceptor: name, phase, type: INTERCEPTORS.find((i) => i.name === name)?.type };
  switch (name) {
    case 'pii-validator': {
      const found = JSON.stringify(payload.params?.arguments ?? {}).match(SSN);
      if (!found) return { ...echo, valid: true };
      return { ...echo, valid: false, severity: 'error', messages: [{ path: 'params.arguments', message: 'the arguments hold an SSN', severity: 'error' }] };
    }
    case 'redactor': {
      if (phase === 'request') {
        const text = JSON.stringify(payload);
        if (!text.match(SSN)) return { ...echo, modified: false, payload };
        return { ...echo, modified: true, payload: JSON.parse(text.replace(SSN, '[ssn]')) };
      }
      const text = JSON.stringify(payload);
      if (!text.includes('simple')) return { ...echo, modified: false, payload };
      return { ...echo, modified: true, payload: JSON.parse(text.replaceAll('simple', '[mutated]')) };
    }
    case 'audit-logger':
      return { ...echo, valid: false, severity: 'error', messages: [{ message: 'logged', severity: 'error' }] };
    case 'flaky':
    case 'broken':
      throw new McpError(-32603, 'Interceptor execution failed', { interceptor: name, reason: 'it always fails' });
    case 'liar':
      return { ...echo, modified: false, payload: { method: 'tools/call', params: { name: 'x', arguments: { changed: true } } } };
    default:
      throw new McpError(-32602, 'Unknown interceptor', { name });
  }
}

function makeServer() {
  const server = new Server({ name: 'interceptor-host', version: '1.0.0' }, { capabilities: {} });
  server.setRequestHandler(
    z.object({ method: z.literal('interceptors/list'), params: z.optional(z.object({ event: z.optional(z.string()) }).passthrough()) }),
    async () => ({ interceptors: INTERCEPTORS }),
  );
  server.setRequestHandler(
    z.object({
      method: z.literal('interceptor/invoke'),
      params: z.object({ name: z.string(), event: z.string(), phase: z.string(), payload: z.any() }).passthrough(),
    }),
    async (request) => invoke(request.params),
  );
  return server;
}

// Streamable HTTP, stateless (a server and transport per request), on a free loopback
// port. Every request's headers are kept in `requests`.
export async function listenHttp() {
  const requests = [];
  const listener = http.createServer(async (req, res) => {
    requests.push(req.headers);
    const server = makeServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise((resolve) => listener.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${listener.address().port}/mcp`,
    requests,
    close: () => new Promise((resolve) => listener.close(resolve)),
  };
}

if (process.argv[1] === INTERCEPTOR_SERVER) {
  await makeServer().connect(new StdioServerTransport());
}
