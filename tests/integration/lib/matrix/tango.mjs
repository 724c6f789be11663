// The real-client matrix's case table (lib/client_matrix.mjs) for the tango pack against the Tango
// API fixture (tests/fixtures/tango): every tool listed and called, success and documented error
// paths, by the SDK 1.x and 2.x clients, the Inspector CLI and toolport list/call.
// client_matrix_tango_{http,stdio}.test.mjs run it over each transport (a file each, so that each
// stays well inside the per-file timeout).
import { startTangoFixture } from '../../../fixtures/tango/server.mjs';

const UEI = 'N553JH75Z8K1';
const TANGO_CASES = [
  { tool: 'search_tango_contracts', args: { vendor_uei: UEI, award_date_start: '2024-01-01', award_date_end: '2024-12-31', limit: 3 }, expect: 'ok', inspector: true },
  { tool: 'search_tango_contracts', args: { award_date_start: '01/15/2024' }, expect: { code: 'INVALID_FORMAT' }, inspector: true },
  { tool: 'search_tango_contracts', args: { vendor_uei: 'O553JH75Z8K1' }, expect: { code: 'INVALID_FORMAT' } },
  // A model's invented argument names are refused, naming them (defect 2).
  { tool: 'search_tango_contracts', args: { keyword: 'cloud', agency: 'GSA', start_date: '2025-01-01' }, expect: { code: 'INVALID_ARGUMENT' }, inspector: true },
  // Tango itself failing: its 429 and 5xx reach the agent as a clear, typed error.
  {
    tool: 'search_tango_contracts',
    args: (ctx) => ({ query: `limited ${ctx.tag}` }),
    before: (ctx) => ctx.fixtures.tango.nextResponse({ status: 429, headers: { 'Retry-After': '5' }, body: { detail: 'Rate limit exceeded. Please try again in 5 seconds.', wait_in_seconds: 5 } }),
    after: (ctx) => ctx.fixtures.tango.reset(),
    expect: { code: 'RATE_LIMITED' },
  },
  {
    tool: 'search_tango_contracts',
    args: (ctx) => ({ query: `broken ${ctx.tag}` }),
    before: (ctx) => ctx.fixtures.tango.nextResponse({ status: 500, body: { detail: 'Internal server error' }, times: 3 }),
    after: (ctx) => ctx.fixtures.tango.reset(),
    expect: { code: 'UPSTREAM_ERROR' },
  },
  { tool: 'search_tango_grants', args: { query: 'alzheimer', limit: 2 }, expect: 'ok' },
  { tool: 'search_tango_grants', args: { posted_date_start: 'yesterday' }, expect: { code: 'INVALID_FORMAT' } },
  { tool: 'search_tango_opportunities', args: { naics_code: '5617', limit: 5 }, expect: 'ok' },
  { tool: 'search_tango_opportunities', args: { source: 'forecasts', naics_code: '561720' }, expect: 'ok' },
  { tool: 'get_tango_vendor_profile', args: { uei: UEI, recent_contracts_limit: 2 }, expect: 'ok', inspector: true },
  { tool: 'get_tango_vendor_profile', args: {}, expect: { code: 'MISSING_PARAMETER' } },
  { tool: 'get_tango_vendor_profile', args: { uei: 'XRKKJ1T3PKP7' }, expect: { code: 'NOT_FOUND' }, inspector: true },
  { tool: 'get_tango_spending_summary', args: { group_by: 'agency', fiscal_year: 2024, vendor_uei: UEI }, expect: 'ok', inspector: true },
  { tool: 'get_tango_spending_summary', args: { group_by: 'county' }, expect: { code: 'INVALID_ARGUMENT' } },
];

export const source = {
  name: 'tango',
  packs: 'tango',
  fixtures: async () => ({ tango: await startTangoFixture({ apiKeys: ['matrix-key'] }) }),
  config: ({ tango }) => `packs:\n  tango:\n    base_url: ${tango.url}\n`,
  env: () => ({ TANGO_API_KEY: 'matrix-key' }),
  beforeCell: ({ tango }) => tango.reset(),
  cases: TANGO_CASES,
};
