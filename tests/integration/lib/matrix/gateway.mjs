// The real-client matrix's case table (lib/client_matrix.mjs) for the gateway over the official
// server-everything (stdio upstream): every tool listed and called, success and documented error
// paths, by the SDK 1.x and 2.x clients, the Inspector CLI and toolport list/call.
// client_matrix_gateway_{http,stdio}.test.mjs run it over each transport (a file each, so that each
// stays well inside the per-file timeout).
import { NODE, EVERYTHING, yamlString } from '../gateway_setup.mjs';

const GATEWAY_CASES = [
  { tool: 'echo', args: { message: 'hi' }, expect: 'ok', inspector: true },
  { tool: 'echo', args: {}, expect: { code: 'MISSING_PARAMETER' }, inspector: true },
  { tool: 'get-sum', args: { a: 2, b: 3 }, expect: 'ok' },
  { tool: 'get-sum', args: { a: 'two', b: 3 }, expect: { code: 'INVALID_ARGUMENT' } },
  { tool: 'get-env', args: {}, expect: 'ok' },
  { tool: 'get-annotated-message', args: { messageType: 'success' }, expect: 'ok' },
  { tool: 'get-resource-links', args: { count: 2 }, expect: 'ok' },
  { tool: 'get-resource-reference', args: { resourceType: 'Text', resourceId: 1 }, expect: 'ok' },
  { tool: 'get-structured-content', args: { location: 'Chicago' }, expect: 'ok', inspector: true },
  { tool: 'get-tiny-image', args: {}, expect: 'ok' },
  { tool: 'gzip-file-as-resource', args: { name: 'hello.txt.gz', data: 'data:text/plain;base64,aGVsbG8=', outputType: 'resource' }, expect: 'ok' },
  { tool: 'get-roots-list', args: {}, expect: 'ok' },
  { tool: 'toggle-simulated-logging', args: {}, expect: 'ok' },
  { tool: 'toggle-subscriber-updates', args: {}, expect: 'ok' },
  { tool: 'trigger-long-running-operation', args: { duration: 0.2, steps: 2 }, expect: 'ok' },
  { tool: 'trigger-sampling-request', args: { prompt: 'hi', maxTokens: 10 }, expect: 'ok', needs: 'sampling' },
  { tool: 'trigger-elicitation-request', args: {}, expect: 'ok', needs: 'elicitation' },
  // It requires a task: a client that cannot make one is told so (-32601).
  { tool: 'simulate-research-query', args: { topic: 'tides' }, expect: 'ok', needs: ['tasks', 'elicitation'], without: { rpc: -32601 } },
];

export const source = {
  name: 'gateway',
  packs: '',
  // server-everything calls no web API: an operator says so (downstream_calls_estimate: 0),
  // or every call of it is counted as the pipeline's 12 and one session's quick run of
  // cases spends the budget of a user request (seed 002) after 10 calls.
  config: () => `upstreams:\n  everything:\n    command: ${yamlString(NODE)}\n    args: [${yamlString(EVERYTHING)}, stdio]\n    downstream_calls_estimate: 0\n`,
  cases: GATEWAY_CASES,
};
