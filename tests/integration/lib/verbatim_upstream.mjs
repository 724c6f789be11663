// An upstream MCP server (stdio, newline-delimited JSON written by hand, no SDK) whose tool
// results are fixed texts, so that a test can see what a gateway does with the bytes: its
// members in an order of its own, spaces, \u escapes, a number beyond 64 bits.
//
//   node verbatim_upstream.mjs          (stdio)
//
// Tools:
//   verbatim {}   a fixed result (content, structuredContent and _meta as below)
//   failing  {}   an error result (isError) with content in the same style
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const VERBATIM_UPSTREAM = fileURLToPath(import.meta.url);

// Exactly as written on the wire (inside the reply's result).
export const VERBATIM_CONTENT = '[ {"type":"text", "text":"caf\\u00e9 \\"quoted\\" \\ud83d\\ude00"} ]';
export const VERBATIM_STRUCTURED = '{"z":1.0,"a":123456789012345678901234567890,"list":[ true,null ]}';
// The result's _meta: the upstream's own accounting, as a Toolport upstream sends it.
export const VERBATIM_META = '{"verbatim/note":"kept","duration_ms":0.123456,"response_size_bytes":999}';
const FAILING_CONTENT = '[ {"type":"text", "text":"the verbatim upstream failed on purpose"} ]';

const TOOLS = [
  {
    name: 'verbatim',
    description: 'A fixed result.',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
  },
  { name: 'failing', description: 'A fixed error result.', inputSchema: { type: 'object', properties: {} } },
];

function reply(id, resultText) {
  process.stdout.write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultText}}\n`);
}

if (process.argv[1] === VERBATIM_UPSTREAM) {
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    if (message.id === undefined || !message.method) return;  // notifications, replies
    switch (message.method) {
      case 'initialize':
        return reply(message.id, JSON.stringify({
          protocolVersion: message.params?.protocolVersion ?? '2025-06-18',
          capabilities: { tools: {} },
          serverInfo: { name: 'verbatim-upstream', version: '1.0.0' },
        }));
      case 'tools/list':
        return reply(message.id, JSON.stringify({ tools: TOOLS }));
      case 'tools/call':
        if (message.params?.name === 'failing') return reply(message.id, `{"isError": true, "content":${FAILING_CONTENT}}`);
        return reply(message.id, `{"content":${VERBATIM_CONTENT}, "structuredContent":${VERBATIM_STRUCTURED}, "_meta":${VERBATIM_META}}`);
      case 'ping':
        return reply(message.id, '{}');
      default:
        process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } })}\n`);
    }
  });
}
