// The real-client matrix's case table (lib/client_matrix.mjs) for a REST catalog (the agentpmt
// preset against tests/fixtures/agentpmt): every tool listed and called, success and documented
// error paths, by the SDK 1.x and 2.x clients, the Inspector CLI and toolport list/call.
// client_matrix_rest_{http,stdio}.test.mjs run it over each transport (a file each, so that each
// stays well inside the per-file timeout).
import { startCatalogFixture } from '../../../fixtures/agentpmt/server.mjs';

const REST_CASES = [
  { tool: 'echo-parameters', args: { message: 'hi' }, expect: 'ok', inspector: true },
  { tool: 'echo-parameters', args: {}, expect: { code: 'MISSING_PARAMETER' }, inspector: true },
  { tool: 'word-count', args: { text: 'one two three' }, expect: 'ok' },
  { tool: 'currency-convert', args: { amount: 10, from: 'USD', to: 'EUR' }, expect: 'ok' },
  { tool: 'currency-convert', args: { amount: 10, from: 'JPY' }, expect: { code: 'INVALID_ARGUMENT' } },
  // The catalog's own refusal (success: false) is an application error, typed as such.
  { tool: 'premium-lookup', args: { query: 'x' }, expect: { code: 'UPSTREAM_ERROR' }, inspector: true },
  { tool: 'broken-service', args: {}, expect: { code: 'UPSTREAM_ERROR' } },
  { tool: 'slow-report', args: { delay_ms: 50 }, expect: 'ok' },
  { tool: 'bulk-export', args: { size_kb: 2 }, expect: 'ok' },
  { tool: 'stream-story', args: { chunks: 2 }, expect: 'ok' },
  { tool: 'cache-entry', args: { key: 'k' }, expect: 'ok' },
  { tool: 'unit-convert', args: { value: 3, unit: 'm' }, expect: 'ok' },
  { tool: 'server-time', args: {}, expect: 'ok' },
  { tool: 'key-check', args: {}, expect: 'ok' },
  { tool: 'data-tool-14', args: { query: 'x' }, expect: 'ok' },
  { tool: 'data-tool-15', args: { query: 'y', limit: 2 }, expect: 'ok' },
  { tool: /^echo-parameters_[0-9a-f]{6}$/, args: { message: 'twin' }, expect: 'ok' },
];

export const source = {
  name: 'rest',
  packs: '',
  fixtures: async () => ({ catalog: await startCatalogFixture({ tools: 16 }) }),
  config: () => 'rest:\n  agentpmt:\n    preset: agentpmt\n',
  env: ({ catalog }) => ({ AGENT_PAYMENT_API_URL: catalog.url, AGENT_PAYMENT_API_KEY: catalog.apiKey, AGENT_PAYMENT_BUDGET_KEY: catalog.budgetKey }),
  cases: REST_CASES,
};
