// The real-client matrix's case table (lib/client_matrix.mjs) for an OpenAPI source
// (tests/fixtures/openapi's inventory document and API): every tool listed and called, success and
// documented error paths, by the SDK 1.x and 2.x clients, the Inspector CLI and toolport list/call.
// client_matrix_openapi_{http,stdio}.test.mjs run it over each transport (a file each, so that each
// stays well inside the per-file timeout).
import { ROOT } from '../client_matrix.mjs';
import path from 'node:path';
import { startInventoryFixture } from '../../../fixtures/openapi/server.mjs';

const OPENAPI_CASES = [
  { tool: 'listItems', args: { tag: ['toys'], limit: 5 }, expect: 'ok', inspector: true },
  { tool: 'getItem', args: { itemId: '1' }, expect: 'ok' },
  { tool: 'getItem', args: { itemId: 'nope' }, expect: { code: 'NOT_FOUND' }, inspector: true },
  { tool: 'getItem', args: {}, expect: { code: 'MISSING_PARAMETER' } },
  { tool: 'createItem', args: { name: 'Kite', price: 3, tags: ['toys'] }, expect: 'ok', inspector: true },
  { tool: 'updateItem', args: { itemId: '2', name: 'Gizmo', parent: null }, expect: 'ok' },
  { tool: 'addNotes', args: { itemId: '1', body: ['fragile'] }, expect: 'ok' },
  { tool: 'addNotes', args: { itemId: 'nope', body: ['x'] }, expect: { code: 'NOT_FOUND' } },
  { tool: 'deleteItem', args: { itemId: '3' }, expect: 'ok' },
  { tool: 'getCategory', args: { categoryId: 4 }, expect: 'ok' },
  { tool: 'getFile', args: { name: 'readme.txt' }, expect: 'ok' },
  { tool: 'getStatus', args: {}, expect: 'ok' },
  { tool: 'explode', args: {}, expect: { code: 'UPSTREAM_ERROR' } },
];

export const source = {
  name: 'openapi',
  packs: '',
  fixtures: async () => ({ inventory: await startInventoryFixture({ apiKey: 'matrix-key', token: 'matrix-token' }) }),
  config: ({ inventory }) =>
    `openapi:\n  inventory:\n    document: ${path.join(ROOT, 'tests/fixtures/openapi/inventory.yaml')}\n    base_url: ${inventory.url}/v1\n`,
  env: () => ({ INVENTORY_API_KEY: 'matrix-key', INVENTORY_BEARER: 'matrix-token' }),
  beforeCell: ({ inventory }) => inventory.reset(),
  cases: OPENAPI_CASES,
};
