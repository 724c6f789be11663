// The baseline of bench/run_http_bench.sh: the official MCP TypeScript SDK serving Streamable
// HTTP, stateful (one McpServer + transport per session, as in the SDK's own examples),
// with enableJsonResponse so a tools/call is answered with a plain JSON body like Toolport's.
// It registers test_simple_text, returning the same text as Toolport's conformance pack.
//
// Usage: node ts-sdk-server.mjs PORT     (listens on 127.0.0.1 only; prints "listening PORT")
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

const port = Number(process.argv[2] ?? 0);
const TEXT = 'This is a simple text response for testing.';

function makeServer() {
  const server = new McpServer({ name: 'ts-sdk-bench', version: '1.0.0' });
  server.registerTool('test_simple_text', { description: 'Tests simple text content response' }, async () => ({
    content: [{ type: 'text', text: TEXT }],
  }));
  return server;
}

const transports = new Map(); // session id -> transport

function sendError(res, status, message) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const httpServer = http.createServer(async (req, res) => {
  try {
    if (!req.url.startsWith('/mcp')) return sendError(res, 404, 'Not Found');
    let body;
    if (req.method === 'POST') {
      try {
        body = JSON.parse(await readBody(req));
      } catch {
        return sendError(res, 400, 'Parse error');
      }
    }
    const sessionId = req.headers['mcp-session-id'];
    let transport = sessionId ? transports.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId) return sendError(res, 404, 'Session not found');
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        return sendError(res, 400, 'Bad Request: Mcp-Session-Id header is required');
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (id) => transports.set(id, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId) transports.delete(transport.sessionId);
      };
      await makeServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  } catch (err) {
    if (!res.headersSent) sendError(res, 500, String(err));
  }
});
httpServer.keepAliveTimeout = 120_000; // like Toolport's keep_alive_timeout
httpServer.listen(port, '127.0.0.1', () => {
  console.log(`listening ${httpServer.address().port}`);
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(0));
