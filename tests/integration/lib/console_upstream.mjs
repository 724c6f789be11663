// An upstream MCP server for the console's browser tests, served over Streamable HTTP from the
// test's own process (the official SDK's low-level Server, stateless: a server per request), so
// a test can stop it and start it again on the same port.
//
// Tools:
//   plan_trip {trip: {from, to, date}, travellers: [{name, age}], class}
//        nested arguments; answers structuredContent {summary, travellers, class} (outputSchema)
//   bulk_0000 … {n}   `bulk` more tools (a large catalog), each answering its n
import http from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export const PLAN_TRIP = {
  name: 'plan_trip',
  title: 'Plan a trip',
  description: 'Plans a trip for some travellers.',
  inputSchema: {
    type: 'object',
    properties: {
      trip: {
        type: 'object',
        description: 'Where and when.',
        properties: {
          from: { type: 'string', minLength: 1 },
          to: { type: 'string', minLength: 1 },
          date: { type: 'string', format: 'date' },
        },
        required: ['from', 'to'],
      },
      travellers: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } },
          required: ['name', 'age'],
        },
      },
      class: { type: 'string', enum: ['economy', 'business'], default: 'economy' },
    },
    required: ['trip', 'travellers'],
  },
  outputSchema: {
    type: 'object',
    properties: {
      summary: { type: 'string' },
      travellers: { type: 'integer' },
      class: { type: 'string' },
    },
    required: ['summary', 'travellers', 'class'],
  },
};

function bulkTools(count) {
  return Array.from({ length: count }, (_, i) => ({
    name: `bulk_${String(i).padStart(4, '0')}`,
    description: `Bulk tool number ${i} of a large catalog.`,
    inputSchema: { type: 'object', properties: { n: { type: 'integer' } } },
  }));
}

function mcpServer(tools) {
  const server = new Server({ name: 'console-upstream', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: args = {} } = request.params;
    if (name.startsWith('bulk_')) return { content: [{ type: 'text', text: String(args.n ?? '') }] };
    if (name !== 'plan_trip') throw new Error(`unknown tool ${name}`);
    const structured = {
      summary: `${args.trip.from} to ${args.trip.to}${args.trip.date ? ` on ${args.trip.date}` : ''} for ${args.travellers
        .map((t) => `${t.name} (${t.age})`)
        .join(', ')}`,
      travellers: args.travellers.length,
      class: args.class ?? 'economy',
    };
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  });
  return server;
}

// Serves on `port` (0: any free one) with `bulk` more tools; stop() closes every connection,
// start() serves again on the same port.
export async function startConsoleUpstream({ port = 0, bulk = 0 } = {}) {
  const tools = [PLAN_TRIP, ...bulkTools(bulk)];
  let httpServer = null;
  const sockets = new Set();
  const upstream = {
    port,
    get url() {
      return `http://127.0.0.1:${upstream.port}/mcp`;
    },
    async start() {
      httpServer = http.createServer(async (req, res) => {
        const chunks = [];
        for await (const chunk of req) chunks.push(chunk);
        const body = chunks.length ? JSON.parse(Buffer.concat(chunks)) : undefined;
        const server = mcpServer(tools);
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        res.on('close', () => (transport.close(), server.close()));
        await server.connect(transport);
        await transport.handleRequest(req, res, body);
      });
      httpServer.on('connection', (socket) => (sockets.add(socket), socket.on('close', () => sockets.delete(socket))));
      await new Promise((resolve, reject) => {
        httpServer.once('error', reject);
        httpServer.listen(upstream.port, '127.0.0.1', resolve);
      });
      upstream.port = httpServer.address().port;
    },
    async stop() {
      if (!httpServer) return;
      const closing = new Promise((resolve) => httpServer.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closing;
      httpServer = null;
    },
  };
  await upstream.start();
  return upstream;
}
