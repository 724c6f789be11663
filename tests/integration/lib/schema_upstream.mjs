// An upstream MCP server (stdio, the official SDK's low-level Server) whose tools test what
// the gateway does with their schemas (issue 29): a closed inputSchema
// (additionalProperties: false), an open one, an error result whose structuredContent
// does not match the tool's outputSchema (as some servers send), a tool that changes
// state and a read-only one that reads it (for the cache's freshness).
//
//   node schema_upstream.mjs          (stdio)
//
// Tools:
//   lookup {id}        closed schema, outputSchema {record}; id "missing" answers
//                      isError with structuredContent {error, status} (not a {record})
//   echo_args {text}   open schema; answers the arguments it received as JSON text
//   set_value {value}  not read-only: stores value
//   get_value {}       readOnlyHint: the value stored
import { fileURLToPath } from 'node:url';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export const SCHEMA_UPSTREAM = fileURLToPath(import.meta.url);

let value = 'initial';

const TOOLS = [
  {
    name: 'lookup',
    description: 'A record by id ("missing" is never found).',
    inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false },
    outputSchema: { type: 'object', properties: { record: { type: 'object' } }, required: ['record'] },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'echo_args',
    description: 'Answers the arguments it received.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  },
  {
    name: 'set_value',
    description: 'Stores a value.',
    inputSchema: { type: 'object', properties: { value: { type: 'string' } }, required: ['value'] },
    annotations: { readOnlyHint: false },
  },
  {
    name: 'get_value',
    description: 'The stored value.',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
  },
];

const server = new Server({ name: 'schema-server', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const { name, arguments: args = {} } = request.params;
  switch (name) {
    case 'lookup':
      if (args.id === 'missing') {
        return {
          isError: true,
          content: [{ type: 'text', text: 'NOT_FOUND: no record "missing". Suggestion: look up an id that exists' }],
          structuredContent: { error: 'not found', status: 404 },
        };
      }
      return { content: [{ type: 'text', text: JSON.stringify({ record: { id: args.id } }) }], structuredContent: { record: { id: args.id } } };
    case 'echo_args':
      return { content: [{ type: 'text', text: JSON.stringify(args) }] };
    case 'set_value':
      value = String(args.value);
      return { content: [{ type: 'text', text: `stored ${value}` }] };
    case 'get_value':
      return { content: [{ type: 'text', text: value }] };
    default:
      return { isError: true, content: [{ type: 'text', text: `unknown tool ${name}` }] };
  }
});
if (process.argv[1] === SCHEMA_UPSTREAM) await server.connect(new StdioServerTransport());
