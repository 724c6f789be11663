// A protected upstream MCP server for the gateway's upstream-credential tests: the official
// TypeScript SDK's Streamable HTTP server behind a check of the bearer token. It refuses (401,
// as a protected MCP server does) a request without a token the authorization-server fixture
// `as` (lib/auth_server.mjs) signed for its audience, a token in `up.revoked`, and a token of a
// user in `up.refusedUsers`; `up.refusals` counts those answers and `up.seen` keeps every
// request's token ('' for none). Its tools (`tools`, default ['whoami']) answer with the token
// the call came with: {"token": "..."}.
//
//   const up = await startProtectedUpstream(as, { audience: 'https://files.example.test' });
//   const up = await startProtectedUpstream(as, { metadata: true });   // audience: up.url
//   ... up.url, up.seen, up.revoked.add(token), up.refusals
//   await up.stop();
//
// With `metadata`, it also serves its Protected Resource Metadata (RFC 9728, naming `as`) and
// its 401s point at it (resource_metadata), as a server the MCP client may log in to does.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { verified } from './auth_server.mjs';

// The token of an Authorization header `Bearer <token>`, or undefined.
export const bearerOf = (authorization) => /^Bearer (.+)$/.exec(authorization ?? '')?.[1];

export async function startProtectedUpstream(as, { audience, metadata = false, tools = ['whoami'] } = {}) {
  const up = { seen: [], revoked: new Set(), refusedUsers: new Set(), refusals: 0 };
  const transports = new Map();
  up.server = http.createServer(async (req, res) => {
    try {
      if (metadata && req.method === 'GET' && req.url.startsWith('/.well-known/oauth-protected-resource')) {
        const prm = { resource: up.url, authorization_servers: [as.issuer], scopes_supported: ['files:read'] };
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(prm));
        return;
      }
      const token = bearerOf(req.headers.authorization);
      up.seen.push(token ?? '');
      const claims = token && verified(token, as.keys);
      if (!claims || claims.aud !== (audience ?? up.url) || up.revoked.has(token) || up.refusedUsers.has(claims.sub)) {
        up.refusals++;
        const pointer = metadata ? `resource_metadata="${up.origin}/.well-known/oauth-protected-resource/mcp", ` : '';
        res.writeHead(401, { 'WWW-Authenticate': `Bearer ${pointer}error="invalid_token"` }).end();
        return;
      }
      let body;
      if (req.method === 'POST') {
        let raw = '';
        for await (const chunk of req) raw += chunk;
        body = JSON.parse(raw);
      }
      const sid = req.headers['mcp-session-id'];
      let transport = sid ? transports.get(sid) : undefined;
      if (!transport) {
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: true,
          onsessioninitialized: (id) => transports.set(id, transport),
        });
        const mcp = new McpServer({ name: 'files-upstream', version: '1.0.0' });
        const whoami = async (extra) => ({
          content: [{ type: 'text', text: JSON.stringify({ token: bearerOf(extra.requestInfo?.headers?.authorization) }) }],
        });
        for (const name of tools) mcp.registerTool(name, { description: 'Tells which token the call came with' }, whoami);
        await mcp.connect(transport);
      }
      await transport.handleRequest(req, res, body);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    }
  });
  await new Promise((resolve) => up.server.listen(0, '127.0.0.1', resolve));
  up.origin = `http://127.0.0.1:${up.server.address().port}`;
  up.url = `${up.origin}/mcp`;
  up.stop = () => {
    up.server.closeAllConnections?.();
    return new Promise((resolve) => up.server.close(resolve));
  };
  return up;
}
