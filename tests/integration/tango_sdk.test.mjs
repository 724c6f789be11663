// The tango pack as the SDK 1.x client meets it (issue 29): the client lists the tools
// first, so it validates every structuredContent against the tool's outputSchema (Ajv)
// and throws -32602 on a mismatch. Every error path of every tango tool must reach the
// agent as an isError result whose text names the error code and a suggestion, every
// success must validate, a refused optional sub-request labels the part it cost instead
// of failing the call, `filters` speaks the tool's own argument names, and a malformed
// cursor is refused before any request goes to Tango (the fixture in
// tests/fixtures/tango).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { startHttpServer } from './lib/harness.mjs';
import { startTangoFixture } from '../fixtures/tango/server.mjs';

const KEY = 'fixture-key';
const TOOLS = ['search_tango_contracts', 'search_tango_grants', 'get_tango_vendor_profile', 'search_tango_opportunities',
               'get_tango_spending_summary'];

// Arguments each tool answers successfully with (a first request the fixture can fail).
const OK_ARGS = {
  search_tango_contracts: { query: 'cloud', limit: 2 },
  search_tango_grants: { query: 'rural', limit: 2 },
  get_tango_vendor_profile: { uei: 'N553JH75Z8K1', recent_contracts_limit: 2 },
  search_tango_opportunities: { limit: 2 },
  get_tango_spending_summary: { group_by: 'vendor', fiscal_year: 2024 },
};

// Arguments refused before any request, per tool: [arguments, error code].
const REFUSED = {
  search_tango_contracts: [
    [{ award_date_start: '01/15/2024' }, 'INVALID_FORMAT'],
    [{ award_date_start: '2024-12-31', award_date_end: '2024-01-01' }, 'INVALID_ARGUMENT'],
    [{ vendor_uei: 'O553JH75Z8K1' }, 'INVALID_FORMAT'],
    [{ naics_code: '5' }, 'INVALID_FORMAT'],
    [{ psc_code: 'D3-2' }, 'INVALID_FORMAT'],
    [{ ordering: 'recipient_name' }, 'INVALID_ARGUMENT'],
    [{ limit: 500 }, 'INVALID_ARGUMENT'],
    [{ set_aside_type: 'NOPE' }, 'INVALID_ARGUMENT'],
    [{ min_obligated: -5 }, 'INVALID_ARGUMENT'],
    [{ cursor: 'page:2' }, 'INVALID_FORMAT'],
    [{ cursor: 'bm90IGEga2V5c2V0' }, 'INVALID_FORMAT'],  // base64 of "not a keyset"
  ],
  search_tango_grants: [
    [{ posted_date_start: '2024-13-01' }, 'INVALID_FORMAT'],
    [{ status: 'open' }, 'INVALID_ARGUMENT'],
    [{ ordering: 'title' }, 'INVALID_ARGUMENT'],
    [{ funding_instruments: 'G;CA' }, 'INVALID_FORMAT'],
    [{ cursor: 'page:0' }, 'INVALID_FORMAT'],
    [{ cursor: 'WyIyMDI0LTAxLTAxIl0=' }, 'INVALID_FORMAT'],
  ],
  get_tango_vendor_profile: [
    [{}, 'MISSING_PARAMETER'],
    [{ uei: '0BADUEI' }, 'INVALID_FORMAT'],
    [{ uei: 'N553JH75Z8K1', recent_contracts_limit: 99 }, 'INVALID_ARGUMENT'],
  ],
  search_tango_opportunities: [
    [{ source: 'notices' }, 'INVALID_ARGUMENT'],
    [{ notice_type: 'xx' }, 'INVALID_FORMAT'],
    [{ response_deadline_start: '2026-02-30' }, 'INVALID_FORMAT'],
    [{ active: 'yes' }, 'INVALID_ARGUMENT'],
    [{ source: 'forecasts', ordering: 'posted_date' }, 'INVALID_ARGUMENT'],
    [{ cursor: 'abc' }, 'INVALID_FORMAT'],
  ],
  get_tango_spending_summary: [
    [{ group_by: 'office' }, 'INVALID_ARGUMENT'],
    [{ last_months: 6, fiscal_year: 2024 }, 'INVALID_ARGUMENT'],
    [{ fiscal_year: 2024, award_date_start: '2025-01-01' }, 'INVALID_ARGUMENT'],
    [{ vendor_uei: 'bad' }, 'INVALID_FORMAT'],
    [{ top: 0 }, 'INVALID_ARGUMENT'],
  ],
};

// How Tango can fail a tool's first request: [fixture response, error code].
const UPSTREAM = [
  [{ status: 429, headers: { 'Retry-After': '45' }, body: { detail: 'Rate limit exceeded for burst. Please try again in 45 seconds.', wait_in_seconds: 45 } }, 'RATE_LIMITED'],
  [{ status: 500, body: { detail: 'Internal server error' } }, 'UPSTREAM_ERROR'],
  [{ status: 502, body: {} }, 'UPSTREAM_ERROR'],
  [{ status: 200, body: { error: 'search backend unavailable' } }, 'UPSTREAM_ERROR'],
  [{ status: 400, body: { error: 'Invalid ordering value(s): x. Allowed values are: award_date.' } }, 'INVALID_ARGUMENT'],
  [{ status: 404, body: { detail: 'No Entity matches the given query.' } }, 'NOT_FOUND'],
  [{ status: 403, body: { detail: 'You do not have permission to perform this action.' } }, 'INVALID_ARGUMENT'],
];

async function connect(url) {
  const client = new Client({ name: 'toolport-it-tango-sdk1', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

describe('tango pack with the SDK 1.x client (list first, then call)', () => {
  let fixture;
  let server;
  let keyless;
  let client;
  let validators;  // tool name → the Ajv validator of its outputSchema
  let schemas;
  let n = 0;

  before(async () => {
    fixture = await startTangoFixture({ apiKeys: [KEY] });
    // Many failures in a row, in one session without a trace id: neither the breaker nor
    // the session's budget of downstream calls may stand in for the answers under test.
    const config = `packs:\n  tango:\n    base_url: ${fixture.url}\npipeline:\n  disable: [circuit_breaker, budget]\n`;
    server = await startHttpServer({ config, packs: 'tango', env: { TANGO_API_KEY: KEY } });
    keyless = await startHttpServer({ config, packs: 'tango', env: { TANGO_API_KEY: '' } });
    client = await connect(server.url);
    const { tools } = await client.listTools();
    const ajv = new AjvJsonSchemaValidator();
    validators = Object.fromEntries(tools.map((t) => [t.name, t.outputSchema && ajv.getValidator(t.outputSchema)]));
    schemas = Object.fromEntries(tools.map((t) => [t.name, t]));
  });
  after(async () => {
    await client?.close().catch(() => {});
    await server?.stop();
    await keyless?.stop();
    await fixture?.close();
  });

  // Calls through the SDK client (which throws on a schema mismatch) and checks the
  // result against the tool's own outputSchema as the SDK does.
  async function call(name, args, c = client) {
    let result;
    try {
      result = await c.callTool({ name, arguments: args });
    } catch (e) {
      assert.fail(`${name} ${JSON.stringify(args)}: the client threw ${e.code} ${e.message}`);
    }
    if (result.structuredContent !== undefined) {
      const verdict = validators[name](result.structuredContent);
      assert.ok(verdict.valid, `${name} ${JSON.stringify(args)}: ${verdict.errorMessage}\n${JSON.stringify(result.structuredContent)}`);
    } else {
      assert.equal(result.isError, true, `${name}: a success without structuredContent`);
    }
    return result;
  }

  // An error result as the agent reads it: the code, and a suggestion, in the text.
  function assertError(result, code, what) {
    assert.equal(result.isError, true, `${what}: ${JSON.stringify(result)}`);
    const text = result.content.filter((b) => b.type === 'text').map((b) => b.text).join('\n');
    assert.ok(text.startsWith(`${code}: `), `${what}: expected ${code}, got ${text}`);
    assert.match(text, /\nSuggestion: \S/, `${what}: no suggestion in ${text}`);
  }

  it('lists the five tools, each with an object outputSchema', () => {
    for (const name of TOOLS) {
      assert.ok(schemas[name], name);
      assert.equal(schemas[name].outputSchema.type, 'object', name);
    }
  });

  it('answers every tool successfully with a result that validates', async () => {
    for (const name of TOOLS) {
      const r = await call(name, OK_ARGS[name]);
      assert.ok(!r.isError, `${name}: ${JSON.stringify(r.content)}`);
    }
    // The parts a tool leaves out on request, and the other answers of a tool.
    for (const [name, args] of [
      ['get_tango_vendor_profile', { uei: 'C47BNA8GM833', include_recent_contracts: false }],
      ['get_tango_vendor_profile', { uei: '1ZFD4' }],
      ['search_tango_opportunities', { source: 'forecasts', limit: 3 }],
      ['get_tango_spending_summary', { group_by: 'month', vendor_uei: 'N553JH75Z8K1', last_months: 36 }],
      ['search_tango_grants', { cursor: 'page:2', limit: 3 }],
    ]) {
      const r = await call(name, args);
      assert.ok(!r.isError, `${name} ${JSON.stringify(args)}: ${JSON.stringify(r.content)}`);
    }
  });

  it('refuses bad arguments before any request, with the code and a suggestion in the text', async () => {
    for (const name of TOOLS) {
      for (const [args, code] of REFUSED[name]) {
        fixture.reset();
        assertError(await call(name, args), code, `${name} ${JSON.stringify(args)}`);
        assert.equal(fixture.stats().count, 0, `${name} ${JSON.stringify(args)} reached Tango`);
      }
    }
  });

  it('reports every way Tango fails a call as an error result the client accepts', async () => {
    for (const name of TOOLS) {
      for (const [response, code] of UPSTREAM) {
        fixture.reset();
        fixture.nextResponse({ times: 3, ...response });  // a transient failure also fails the retry
        // A query of its own, so that no cached answer stands in for the call.
        const args = name === 'get_tango_vendor_profile' ? { uei: 'UX6XA5HES291', include_recent_contracts: false }
          : name === 'get_tango_spending_summary' ? { group_by: 'agency', fiscal_year: 2023 + (++n % 3), top: 1 + (n % 90) }
            : { query: `upstream-${++n}` };
        assertError(await call(name, args), code, `${name} with Tango answering ${response.status}`);
      }
      // A key Tango refuses (401), and no key at all.
      fixture.reset();
      const wrongKey = { ...OK_ARGS[name], api_key: 'not-the-key' };
      assertError(await call(name, wrongKey), 'INVALID_ARGUMENT', `${name} with a refused key`);
      const other = await connect(keyless.url);
      try {
        await other.listTools();
        assertError(await call(name, OK_ARGS[name], other), 'MISSING_API_KEY', `${name} without a key`);
      } finally {
        await other.close().catch(() => {});
      }
    }
    // An unknown vendor is NOT_FOUND with Tango's message, and the machine-readable fields
    // are in _meta["toolport/error"].
    const missing = await call('get_tango_vendor_profile', { uei: 'XRKKJ1T3PKP7' });
    assertError(missing, 'NOT_FOUND', 'an unknown vendor');
    assert.match(missing.content[0].text, /No Entity matches the given query/);
    assert.equal(missing._meta["toolport/error"].error_code, 'NOT_FOUND');
  });

  it('returns the vendor profile when Tango refuses only its recent contracts, labelled incomplete', async () => {
    const vendors = ['N553JH75Z8K1', 'C47BNA8GM833', 'Z9CJC8GFNZ87'];
    const refusals = [
      [{ status: 403, body: { detail: 'You do not have permission to perform this action.' } }, 'INVALID_ARGUMENT', false],
      [{ status: 404, body: { detail: 'Not found.' } }, 'NOT_FOUND', false],
      [{ status: 503, body: { detail: 'Service temporarily unavailable' } }, 'UPSTREAM_ERROR', true],
    ];
    for (const [i, [response, errorCode, transient]] of refusals.entries()) {
      fixture.reset();
      fixture.nextResponse({ times: 3, ...response, path: `/api/entities/${vendors[i]}/contracts/` });
      const r = await call('get_tango_vendor_profile', { uei: vendors[i], recent_contracts_limit: 3 });
      assert.ok(!r.isError, `HTTP ${response.status}: ${JSON.stringify(r.content)}`);
      const profile = r.structuredContent.data[0];
      assert.equal(profile.uei, vendors[i]);
      assert.ok(profile.legal_business_name);
      assert.equal(profile.complete, false);
      assert.equal(profile.recent_contracts, undefined, 'no empty list standing in for the refused one');
      assert.equal(profile.recent_contracts_error.error_code, errorCode);
      assert.equal(profile.recent_contracts_error.transient, transient);
      assert.ok(profile.recent_contracts_error.error.includes(response.body.detail), profile.recent_contracts_error.error);
      assert.ok(profile.recent_contracts_error.suggestion);
      const paths = fixture.stats().requests.map((q) => q.path);
      assert.deepEqual([...new Set(paths)], [`/api/entities/${vendors[i]}/`, `/api/entities/${vendors[i]}/contracts/`]);
    }
    fixture.reset();
    // Answered in full, it says so.
    const full = await call('get_tango_vendor_profile', { uei: 'UX6XA5HES291', recent_contracts_limit: 2 });
    assert.equal(full.structuredContent.data[0].complete, true);
    assert.equal(full.structuredContent.data[0].recent_contracts.length, 2);
    assert.equal(full.structuredContent.data[0].recent_contracts_error, undefined);
  });

  it('adds up contracts when Tango refuses the metrics a summary would use, and says why', async () => {
    fixture.reset();
    fixture.nextResponse({ status: 403, body: { detail: 'You do not have permission to perform this action.' },
                           path: '/api/entities/JNSXDDCLHRM8/metrics/24/month/' });
    const r = await call('get_tango_spending_summary', { group_by: 'month', vendor_uei: 'JNSXDDCLHRM8', last_months: 24 });
    assert.ok(!r.isError, JSON.stringify(r.content));
    const { summary } = r.structuredContent;
    assert.equal(summary.source, 'contracts');
    assert.equal(summary.metrics_error.error_code, 'INVALID_ARGUMENT');
    assert.match(summary.metrics_error.error, /403/);
    assert.match(summary.note, /refused its metrics/);
    assert.ok(fixture.stats().requests.some((q) => q.path === '/api/contracts/'));
  });

  it('sums the pages it got when Tango refuses a later one, and says the sum is partial', async () => {
    fixture.reset();
    fixture.nextResponse({ status: 503, body: { detail: 'Service temporarily unavailable' }, times: 3, after: 1, path: '/api/contracts/' });
    const r = await call('get_tango_spending_summary', { group_by: 'naics' });
    assert.ok(!r.isError, JSON.stringify(r.content));
    const { summary } = r.structuredContent;
    assert.equal(summary.complete, false);
    assert.equal(summary.rows_aggregated, 100);
    assert.equal(summary.total_matching_contracts, 240);
    assert.equal(summary.pages_read, 1);
    assert.equal(summary.pages_error.error_code, 'UPSTREAM_ERROR');
    assert.equal(summary.pages_error.transient, true);
    assert.match(summary.note, /refused page 2/);
    fixture.reset();
  });

  it('reports filters under the tool\'s own argument names, as applied', async () => {
    const cases = [
      ['search_tango_contracts', { query: 'cloud', vendor_uei: 'n553jh75z8k1', award_date_start: '2024-01-01', fiscal_year: 2024,
                                   set_aside_type: 'SDVOSB', min_obligated: 1000, naics_code: '5415', ordering: '-obligated', limit: 1 },
       { query: 'cloud', vendor_uei: 'N553JH75Z8K1', award_date_start: '2024-01-01', fiscal_year: 2024,
         set_aside_type: 'SDVOSBC|SDVOSBS', min_obligated: 1000, naics_code: '5415', ordering: '-obligated' }],
      ['search_tango_grants', { query: 'rural', status: 'posted', posted_date_start: '2025-01-01', funding_instruments: 'g, ca', limit: 1 },
       { query: 'rural', status: 'posted', posted_date_start: '2025-01-01', funding_instruments: 'G|CA' }],
      ['search_tango_opportunities', { query: 'support', posted_date_end: '2026-12-31', active: false, limit: 1 },
       { query: 'support', posted_date_end: '2026-12-31', active: false, source: 'opportunities' }],
      ['search_tango_opportunities', { source: 'forecasts', naics_code: '5415', fiscal_year: 2026, limit: 1 },
       { naics_code: '5415', fiscal_year: 2026, source: 'forecasts' }],
      ['get_tango_spending_summary', { group_by: 'vendor', fiscal_year: 2024, awarding_agency: 'GSA', top: 3 },
       { group_by: 'vendor', fiscal_year: 2024, awarding_agency: 'GSA', award_date_start: '2023-10-01', award_date_end: '2024-09-30' }],
      ['get_tango_vendor_profile', { uei: 'n553jh75z8k1', recent_contracts_limit: 2 },
       { uei: 'N553JH75Z8K1', include_recent_contracts: true, recent_contracts_limit: 2 }],
      ['get_tango_vendor_profile', { uei: '1zfd4', include_recent_contracts: false },
       { uei: '1ZFD4', include_recent_contracts: false }],
    ];
    for (const [name, args, filters] of cases) {
      const r = await call(name, args);
      assert.ok(!r.isError, `${name}: ${JSON.stringify(r.content)}`);
      assert.deepEqual(r.structuredContent.filters, filters, name);
      const accepted = Object.keys(schemas[name].inputSchema.properties);
      for (const key of Object.keys(r.structuredContent.filters)) assert.ok(accepted.includes(key), `${name}: filters.${key}`);
    }
  });

  it('pages with the cursor it hands out, and refuses a cut one before asking Tango', async () => {
    const first = await call('search_tango_contracts', { query: 'cloud', limit: 2 });
    const cursor = first.structuredContent.pagination.next_cursor;
    assert.ok(cursor);
    fixture.reset();
    const second = await call('search_tango_contracts', { query: 'cloud', limit: 2, cursor });
    assert.ok(!second.isError, JSON.stringify(second.content));
    assert.notDeepEqual(second.structuredContent.data, first.structuredContent.data);
    assert.equal(fixture.stats().count, 1);
    fixture.reset();
    assertError(await call('search_tango_contracts', { query: 'cloud', limit: 2, cursor: cursor.slice(0, 17) }), 'INVALID_FORMAT', 'a cut cursor');
    assert.equal(fixture.stats().count, 0);
  });

  it('offers realistic examples: a recent fiscal year, not the schema\'s minimum', async () => {
    for (const name of ['search_tango_contracts', 'search_tango_opportunities', 'get_tango_spending_summary']) {
      const fy = schemas[name].inputSchema.properties.fiscal_year;
      assert.ok(fy.examples?.[0] >= 2020, `${name}: ${JSON.stringify(fy)}`);
      assert.match(fy.description, /Example: 20[2-9][0-9]/);
      const r = await call(name, { fiscal_year: 1900 });
      assertError(r, 'INVALID_ARGUMENT', `${name} fiscal_year 1900`);
      assert.doesNotMatch(r.content[0].text, /Example: 1990/);
      assert.match(r.content[0].text, /Example: 20[2-9][0-9]/);
    }
  });

  it('declares one type per field, leaving out what has no value (no [X, "null"] unions)', async () => {
    const unions = [];
    const walk = (node, at) => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${at}/${i}`));
      if (!node || typeof node !== 'object') return;
      if (Array.isArray(node.type)) unions.push(`${at}: ${JSON.stringify(node.type)}`);
      for (const [k, v] of Object.entries(node)) walk(v, `${at}/${k}`);
    };
    for (const name of TOOLS) walk(schemas[name].outputSchema, name);
    assert.deepEqual(unions, []);
    // What the schemas promise: no null anywhere in an answer. TMPC's contracts carry no
    // set-aside; forecasts leave some dates out; a metrics summary has no contract count.
    const answers = [
      await call('search_tango_contracts', { vendor_uei: 'UX6XA5HES291', limit: 20 }),
      await call('search_tango_opportunities', { source: 'forecasts', limit: 12 }),
      await call('get_tango_spending_summary', { group_by: 'month', vendor_uei: 'UX6XA5HES291', last_months: 48 }),
      await call('get_tango_vendor_profile', { uei: 'JNSXDDCLHRM8' }),
    ];
    for (const r of answers) {
      assert.ok(!r.isError, JSON.stringify(r.content));
      assert.ok(!JSON.stringify(r.structuredContent).includes('null'), JSON.stringify(r.structuredContent).slice(0, 400));
    }
    assert.equal(answers[0].structuredContent.data.some((c) => 'set_aside' in c), true);
    assert.equal(answers[0].structuredContent.data.every((c) => 'set_aside' in c), false, 'a contract without a set-aside leaves it out');
  });
});
