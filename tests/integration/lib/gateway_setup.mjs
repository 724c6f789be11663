// What the gateway tests share: the upstream programs they start, YAML quoting for the
// configurations they write, and how they read a tool result.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

// The Node that runs the tests also runs the Node upstreams.
export const NODE = process.execPath;

// The official server-everything (npm): `node EVERYTHING stdio` (or streamableHttp, sse).
export const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

// What clients accept as a tool name (Claude, OpenAI and Bedrock cap it at 64).
export const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

// A string as a YAML scalar (a JSON string is one).
export const yamlString = (s) => JSON.stringify(s);

// A tool result's text, and its error code: the pipeline's machine-readable
// structuredContent.error_code, else ERROR for another failed result, else OK.
export const text = (result) => result.content?.map((c) => c.text ?? '').join('');
export const code = (result) => result.structuredContent?.error_code ?? (result.isError ? 'ERROR' : 'OK');
