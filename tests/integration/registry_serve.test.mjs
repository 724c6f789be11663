// Toolport serving itself as an MCP Registry (the v0.1 read API), a Server Card per entry and
// the AI Catalog (docs/registry.md, "Serving a registry and Server Cards"). A real toolport
// with a gateway of two profiles over a conformance toolport (stdio child): every answer is
// read over HTTP with fetch, as VS Code's gallery or a crawler reads it.
//
// The documents are checked against schemas written here from the specifications (no npm
// package ships the registry's server.json schema or its OpenAPI document, and fetched
// material is not copied into the repository): the server.json schema's 2025-12-11 release
// (required name/description/version, the name's pattern and lengths, remotes' transports
// and URL pattern, repository's url and source), the v0.1 OpenAPI document's ServerList and
// ServerResponse (the official _meta with its status enum and no other member), and the
// SEP-2127 v1 Server Card schema (its $schema URL, remotes with supportedProtocolVersions).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Ajv from 'ajv';
import { startHttpServer, runToolport, TOOLPORT_BIN } from './lib/harness.mjs';
import { yamlString } from './lib/gateway_setup.mjs';

const UPSTREAM = `upstreams:
  lane:
    command: ${yamlString(TOOLPORT_BIN)}
    args: [serve, --stdio, --packs, conformance]
`;
const PROFILES = `gateway:
  profiles:
    cursor: {upstreams: [lane]}
    vscode: {upstreams: [lane]}
`;
const REGISTRY = `registry:
  serve:
    name: io.example/toolport
    website_url: https://toolport.example/docs
    repository: https://github.com/example/toolport
    profiles:
      vscode: {name: io.example/vscode-tools, description: "Tools chosen for VS Code"}
`;
const NAMES = ['io.example/toolport', 'io.example/toolport-cursor', 'io.example/vscode-tools'];

// ---- schemas written from the specifications (see the file's header) ----
const NAME = { type: 'string', minLength: 3, maxLength: 200, pattern: '^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$' };
const INPUT = {
  type: 'object',
  properties: {
    description: { type: 'string' },
    isRequired: { type: 'boolean' },
    isSecret: { type: 'boolean' },
    format: { enum: ['string', 'number', 'boolean', 'filepath'] },
    value: { type: 'string' },
    default: { type: 'string' },
    choices: { type: 'array', items: { type: 'string' } },
  },
};
const KEY_VALUE_INPUT = {
  type: 'object',
  required: ['name'],
  properties: {
    ...INPUT.properties,
    name: { type: 'string' },
    variables: { type: 'object', additionalProperties: INPUT },
  },
};
const REMOTE = {
  type: 'object',
  required: ['type', 'url'],
  properties: {
    type: { enum: ['streamable-http', 'sse'] },
    url: { type: 'string', pattern: '^(https?://[^\\s]+|\\{[a-zA-Z_][a-zA-Z0-9_]*\\}[^\\s]*)$' },
    headers: { type: 'array', items: KEY_VALUE_INPUT },
    variables: { type: 'object' },
  },
};
const REPOSITORY = {
  type: 'object',
  required: ['url', 'source'],
  properties: { url: { type: 'string', format: 'uri' }, source: { type: 'string' }, id: { type: 'string' }, subfolder: { type: 'string' } },
};
const SERVER_JSON = {
  type: 'object',
  required: ['name', 'description', 'version'],
  properties: {
    $schema: { type: 'string', format: 'uri' },
    name: NAME,
    description: { type: 'string', minLength: 1, maxLength: 100 },
    title: { type: 'string', minLength: 1, maxLength: 100 },
    version: { type: 'string', maxLength: 255, not: { const: 'latest' } },
    websiteUrl: { type: 'string', format: 'uri' },
    repository: REPOSITORY,
    packages: { type: 'array' },
    remotes: { type: 'array', items: REMOTE },
    _meta: { type: 'object' },
  },
};
const SERVER_RESPONSE = {
  type: 'object',
  required: ['server'],
  properties: {
    server: SERVER_JSON,
    _meta: {
      type: 'object',
      properties: {
        'io.modelcontextprotocol.registry/official': {
          type: 'object',
          additionalProperties: false,
          properties: {
            status: { enum: ['active', 'deprecated', 'deleted'] },
            statusMessage: { type: 'string', maxLength: 500 },
            statusChangedAt: { type: 'string', format: 'date-time' },
            publishedAt: { type: 'string', format: 'date-time' },
            updatedAt: { type: 'string', format: 'date-time' },
            isLatest: { type: 'boolean' },
          },
        },
      },
    },
  },
};
const SERVER_LIST = {
  type: 'object',
  required: ['servers'],
  properties: {
    servers: { type: 'array', items: SERVER_RESPONSE },
    metadata: { type: 'object', properties: { nextCursor: { type: 'string' }, count: { type: 'integer' } } },
  },
};
const SERVER_CARD = {
  type: 'object',
  required: ['$schema', 'name', 'version', 'description'],
  properties: {
    $schema: { const: 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json' },
    name: NAME,
    version: { type: 'string', maxLength: 255 },
    description: { type: 'string', minLength: 1, maxLength: 100 },
    title: { type: 'string', minLength: 1, maxLength: 100 },
    websiteUrl: { type: 'string', format: 'uri' },
    repository: REPOSITORY,
    remotes: {
      type: 'array',
      items: { ...REMOTE, properties: { ...REMOTE.properties, supportedProtocolVersions: { type: 'array', items: { type: 'string' } } } },
    },
    _meta: { type: 'object' },
  },
};
const AI_CATALOG = {
  type: 'object',
  required: ['specVersion', 'entries'],
  properties: {
    specVersion: { type: 'string' },
    entries: {
      type: 'array',
      items: {
        type: 'object',
        required: ['identifier', 'type', 'url'],
        properties: {
          identifier: { type: 'string', pattern: '^urn:air:' },
          type: { const: 'application/mcp-server-card+json' },
          url: { type: 'string', format: 'uri' },
        },
      },
    },
  },
};

const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addFormat('uri', (s) => {
  try {
    return new URL(s).protocol.length > 1;
  } catch {
    return false;
  }
});
ajv.addFormat('date-time', (s) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(s) && !Number.isNaN(Date.parse(s)));
const validators = {
  list: ajv.compile(SERVER_LIST),
  response: ajv.compile(SERVER_RESPONSE),
  card: ajv.compile(SERVER_CARD),
  catalog: ajv.compile(AI_CATALOG),
};
function valid(kind, document) {
  const validate = validators[kind];
  assert.ok(validate(document), `${kind}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(document, null, 2)}`);
}

async function get(server, p, headers = {}) {
  const res = await fetch(`${server.base}${p}`, { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : null };
}

describe('serving a registry and Server Cards', () => {
  let server;
  before(async () => {
    server = await startHttpServer({ config: UPSTREAM + PROFILES + REGISTRY });
  });
  after(async () => server?.stop());

  it('lists one entry for the server and one per profile, valid against the registry schemas', async () => {
    const res = await get(server, '/v0.1/servers');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^application\/json/);
    valid('list', res.body);
    assert.deepEqual(res.body.servers.map((s) => s.server.name), NAMES);
    assert.equal(res.body.metadata.count, 3);
    assert.equal(res.body.metadata.nextCursor, undefined);
    const [whole, cursor, vscode] = res.body.servers.map((s) => s.server);
    assert.equal(whole.repository.url, 'https://github.com/example/toolport');
    assert.equal(whole.repository.source, 'github');
    assert.equal(whole.websiteUrl, 'https://toolport.example/docs');
    assert.deepEqual(whole.remotes, [
      { type: 'streamable-http', url: `${server.base}/mcp` },
      { type: 'sse', url: `${server.base}/sse` },
    ]);
    assert.deepEqual(cursor.remotes, [{ type: 'streamable-http', url: `${server.base}/mcp/cursor` }]);
    assert.equal(vscode.description, 'Tools chosen for VS Code');
    // Every entry has Toolport's version, and Toolport's own facts under its key.
    const versions = new Set(res.body.servers.map((s) => s.server.version));
    assert.equal(versions.size, 1);
    const meta = vscode._meta['io.toolport/server'];
    assert.equal(meta.profile, 'vscode');
    assert.equal(meta.version, vscode.version);
    assert.equal(meta.authentication, 'none');
    assert.ok(meta.protocolVersions.includes('2025-11-25'));
    assert.equal(meta.serverCard, `${server.base}/mcp/vscode/server-card`);
    for (const s of res.body.servers) {
      assert.equal(s._meta['io.modelcontextprotocol.registry/official'].status, 'active');
      assert.equal(s._meta['io.modelcontextprotocol.registry/official'].isLatest, true);
    }
    // Nothing names a tool: what a client may call is for it to list once connected.
    assert.doesNotMatch(res.text, /test_simple_text|"tools"/);
  });

  it('pages with an opaque cursor and bounded limit, and searches names', async () => {
    const seen = [];
    let cursor = '';
    for (let pages = 0; pages < 5; pages++) {
      const res = await get(server, `/v0.1/servers?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(res.status, 200, res.text);
      valid('list', res.body);
      assert.equal(res.body.servers.length, 1);
      seen.push(res.body.servers[0].server.name);
      cursor = res.body.metadata.nextCursor ?? '';
      if (!cursor) break;
      assert.ok(!NAMES.some((n) => cursor.includes(n)), `the cursor is opaque: ${cursor}`);
    }
    assert.deepEqual(seen, NAMES);

    const search = await get(server, '/v0.1/servers?search=CURSOR&version=latest');
    assert.deepEqual(search.body.servers.map((s) => s.server.name), ['io.example/toolport-cursor']);
    assert.equal((await get(server, '/v0.1/servers?search=nothing-like-it')).body.servers.length, 0);
    assert.equal((await get(server, '/v0.1/servers?updated_since=2000-01-01T00:00:00Z')).body.servers.length, 3);
    assert.equal((await get(server, '/v0.1/servers?updated_since=2100-01-01T00:00:00Z')).body.servers.length, 0);

    for (const [query, why] of [
      ['limit=0', /limit must be from 1 to 100/],
      ['limit=500', /limit must be from 1 to 100/],
      ['limit=abc', /limit must be a whole number/],
      ['cursor=garbage', /cursor is not one this registry gave/],
      ['updated_since=last-week', /RFC 3339/],
    ]) {
      const res = await get(server, `/v0.1/servers?${query}`);
      assert.equal(res.status, 400, query);
      assert.match(res.body.error, why);
    }
  });

  it('answers versions by encoded name, latest and exact, and 404 for unknown names', async () => {
    const versions = await get(server, `/v0.1/servers/${encodeURIComponent('io.example/vscode-tools')}/versions`);
    assert.equal(versions.status, 200);
    valid('list', versions.body);
    assert.equal(versions.body.servers.length, 1);
    const version = versions.body.servers[0].server.version;

    for (const p of [
      `/v0.1/servers/io.example%2Fvscode-tools/versions/latest`,
      `/v0.1/servers/io.example/vscode-tools/versions/latest`,
      `/v0.1/servers/io.example%2fvscode-tools/versions/${encodeURIComponent(version)}`,
    ]) {
      const res = await get(server, p);
      assert.equal(res.status, 200, p);
      valid('response', res.body);
      assert.equal(res.body.server.name, 'io.example/vscode-tools');
      assert.equal(res.body.server.version, version);
    }
    const unknown = await get(server, '/v0.1/servers/io.example%2Fnope/versions/latest');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error, 'Server not found');
    const oldVersion = await get(server, '/v0.1/servers/io.example%2Ftoolport/versions/0.0.0-none');
    assert.equal(oldVersion.status, 404);
    assert.equal(oldVersion.body.error, 'Server version not found');
    assert.equal((await get(server, '/v0.1/servers/io.example%2Fnope/versions')).status, 404);
  });

  it("answers VS Code's gallery as its mcpGalleryService asks and reads", async () => {
    // The sequence and the checks of microsoft/vscode's src/vs/platform/mcp/common/
    // mcpGalleryService.ts (read, not run): the service URL without its trailing slash, a
    // version probe, pages of 50 of the latest versions with the next cursor appended as it
    // came (not encoded), an installed server looked up by its encoded name.
    const serviceUrl = `${server.base}/`.replace(/\/$/, '');
    const probe = await fetch(`${serviceUrl}/v0.1/servers?limit=1`);
    assert.equal(probe.status, 200, 'v0.1 answered: VS Code does not fall back to /v0');
    const listed = [];
    let url = `${serviceUrl}/v0.1/servers?limit=50&version=latest`;
    for (let page = 0; page < 5 && url; page++) {
      const res = await fetch(url);
      assert.equal(res.status, 200);
      const body = await res.json();
      assert.ok(Array.isArray(body.servers));
      for (const item of body.servers) {
        // What its parser requires of every item, or the page (first item) or item is dropped.
        assert.equal(typeof item.server, 'object');
        for (const key of ['name', 'description', 'version']) assert.ok(typeof item.server[key] === 'string' && item.server[key], key);
        assert.equal(typeof item._meta, 'object');
        const official = item._meta['io.modelcontextprotocol.registry/official'];
        assert.ok(official.isLatest && official.publishedAt && official.updatedAt);
        // Installed as a remote from remotes[0] (no packages): the streamable-http endpoint.
        assert.equal(item.server.packages, undefined);
        assert.equal(item.server.remotes[0].type, 'streamable-http');
        listed.push(item.server.name);
      }
      url = body.metadata.nextCursor ? `${serviceUrl}/v0.1/servers?limit=50&version=latest&cursor=${body.metadata.nextCursor}` : '';
    }
    assert.deepEqual(listed, NAMES);
    // Paged at 2 the same way: the raw cursor (base64url) survives not being encoded.
    const first = await (await fetch(`${serviceUrl}/v0.1/servers?limit=2&version=latest`)).json();
    const second = await fetch(`${serviceUrl}/v0.1/servers?limit=2&version=latest&cursor=${first.metadata.nextCursor}`);
    assert.deepEqual((await second.json()).servers.map((s) => s.server.name), NAMES.slice(2));
    for (const name of NAMES) {
      const res = await fetch(`${serviceUrl}/v0.1/servers/${encodeURIComponent(name)}/versions/latest`);
      assert.equal(res.status, 200, name);
      assert.equal((await res.json()).server.name, name);
    }
    // Not in this gallery: a 4xx, which VS Code reads as "not found".
    assert.equal((await fetch(`${serviceUrl}/v0.1/servers/${encodeURIComponent('io.example/other')}/versions/latest`)).status, 404);
  });

  it('serves a Server Card per entry with its media type, CORS and a strong ETag', async () => {
    const cards = [
      ['/mcp/server-card', 'io.example/toolport', `${server.base}/mcp`],
      ['/mcp/cursor/server-card', 'io.example/toolport-cursor', `${server.base}/mcp/cursor`],
      ['/mcp/vscode/server-card', 'io.example/vscode-tools', `${server.base}/mcp/vscode`],
    ];
    for (const [p, name, url] of cards) {
      const res = await get(server, p, { Accept: 'application/mcp-server-card+json' });
      assert.equal(res.status, 200, p);
      assert.equal(res.headers.get('content-type'), 'application/mcp-server-card+json');
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      assert.match(res.headers.get('access-control-expose-headers'), /ETag/);
      assert.match(res.headers.get('cache-control'), /max-age=\d+/);
      valid('card', res.body);
      assert.equal(res.body.name, name);
      assert.equal(res.body.remotes[0].url, url);
      assert.ok(res.body.remotes[0].supportedProtocolVersions.includes('2026-07-28'));
      assert.doesNotMatch(res.text, /test_simple_text|"tools"/);
      const etag = res.headers.get('etag');
      assert.match(etag, /^"[0-9a-f]+"$/, 'a strong entity tag');
      const again = await get(server, p, { 'If-None-Match': etag });
      assert.equal(again.status, 304);
      assert.equal(again.text, '');
      assert.equal(again.headers.get('etag'), etag);
      assert.equal((await get(server, p, { 'If-None-Match': '"something-else"' })).status, 200);
    }
    assert.equal((await get(server, '/mcp/nope/server-card')).status, 404);
  });

  it('lists the cards in the AI Catalog for discovery', async () => {
    for (const p of ['/.well-known/ai-catalog.json', '/.well-known/mcp/catalog.json']) {
      const res = await get(server, p);
      assert.equal(res.status, 200, p);
      assert.equal(res.headers.get('content-type'), 'application/ai-catalog+json');
      valid('catalog', res.body);
      assert.deepEqual(
        res.body.entries.map((e) => e.url),
        ['/mcp/server-card', '/mcp/cursor/server-card', '/mcp/vscode/server-card'].map((s) => `${server.base}${s}`),
      );
      for (const entry of res.body.entries) {
        const card = await get(server, new URL(entry.url).pathname);
        assert.equal(card.status, 200);
        assert.equal(entry.identifier, `urn:air:example.io:mcp:${card.body.name.split('/')[1]}`);
      }
    }
  });

  it('answers any Origin (public documents) while the MCP endpoint still refuses it', async () => {
    const evil = { Origin: 'https://evil.example' };
    assert.equal((await get(server, '/v0.1/servers', evil)).status, 200);
    assert.equal((await get(server, '/mcp/server-card', evil)).status, 200);
    const mcp = await fetch(`${server.base}/mcp`, { method: 'POST', headers: { ...evil, 'Content-Type': 'application/json' }, body: '{}' });
    assert.equal(mcp.status, 403);
    const post = await fetch(`${server.base}/v0.1/servers`, { method: 'POST', body: '{}' });
    assert.equal(post.status, 405);
    assert.match(post.headers.get('allow'), /GET/);
  });
});

describe('registry serving settings', () => {
  it('derives names from the public URL, asks for the bearer token, and stays public', async (t) => {
    const server = await startHttpServer({
      config: `${UPSTREAM}${PROFILES}http:\n  bearer_tokens_env: RS_TOKENS\nregistry:\n  serve:\n    public_url: https://mcp.example.com/tools/mcp\n`,
      env: { RS_TOKENS: 'secret-token-1' },
    });
    t.after(() => server.stop());
    const res = await get(server, '/v0.1/servers');
    assert.equal(res.status, 200, 'served without a token');
    valid('list', res.body);
    assert.deepEqual(res.body.servers.map((s) => s.server.name), [
      'com.example.mcp/toolport',
      'com.example.mcp/toolport-cursor',
      'com.example.mcp/toolport-vscode',
    ]);
    const whole = res.body.servers[0].server;
    assert.equal(whole.remotes[0].url, 'https://mcp.example.com/tools/mcp');
    assert.equal(whole.remotes[1].url, 'https://mcp.example.com/tools/sse');
    assert.deepEqual(whole.remotes[0].headers.map((h) => [h.name, h.isRequired, h.isSecret]), [['Authorization', true, true]]);
    // The user gives the token, not the "Bearer " before it; each entry asks under an id of its
    // own (a client keeps one secret per id: one id for all would give a profile the server's).
    const [header] = whole.remotes[0].headers;
    assert.equal(header.value, 'Bearer {toolport_token}');
    assert.deepEqual(header.variables.toolport_token, { description: 'The bearer token for this server', isRequired: true, isSecret: true });
    const [profileHeader] = res.body.servers[1].server.remotes[0].headers;
    assert.equal(profileHeader.value, 'Bearer {toolport_token_cursor}');
    assert.deepEqual(Object.keys(profileHeader.variables), ['toolport_token_cursor']);
    assert.equal(whole._meta['io.toolport/server'].authentication, 'bearer');
    assert.doesNotMatch(res.text, /secret-token-1/);
    const card = await get(server, '/mcp/cursor/server-card');
    assert.equal(card.status, 200);
    assert.equal(card.body.remotes[0].url, 'https://mcp.example.com/tools/mcp/cursor');
    assert.equal((await fetch(`${server.base}/mcp`, { method: 'POST', body: '{}' })).status, 401);
  });

  it('is off with registry.serve.enabled: false', async (t) => {
    const server = await startHttpServer({ config: 'registry:\n  serve: {enabled: false}\n' });
    t.after(() => server.stop());
    assert.equal((await get(server, '/v0.1/servers')).status, 404);
    assert.equal((await get(server, '/mcp/server-card')).status, 404);
  });

  it('config check refuses bad names and URLs with the key and line', async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-registry-serve-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'toolport.yaml');
    for (const [yaml, why] of [
      ['registry:\n  serve:\n    name: toolport\n', /:3: registry\.serve\.name: must be namespace\/name in reverse-DNS form/],
      ['registry:\n  serve:\n    public_url: ftp://x/mcp\n', /:3: registry\.serve\.public_url: must be the MCP endpoint's http\(s\) URL/],
      ['registry:\n  serve:\n    description: ""\n', /registry\.serve\.description: must be 1 to 100 characters/],
      ['registry:\n  serve:\n    nmae: x\n', /:3: registry\.serve\.nmae: unknown key; did you mean "name"/],
    ]) {
      writeFileSync(file, yaml);
      const res = await runToolport(['config', 'check', file]);
      assert.equal(res.status, 2, `${yaml}\n${res.stdout}${res.stderr}`);
      assert.match(res.stderr, why);
    }
  });

  it('refuses to serve entries for a profile the gateway lacks', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-registry-serve-'));
    const file = path.join(dir, 'toolport.yaml');
    writeFileSync(file, `${UPSTREAM}${PROFILES}registry:\n  serve:\n    profiles:\n      cursr: {name: io.example/c}\n`);
    try {
      // Refused when the file is read, before any source starts: `config check` says so too.
      const checked = await runToolport(['config', 'check', file]);
      assert.equal(checked.status, 2, checked.stderr);
      assert.match(checked.stderr, /registry\.serve\.profiles\.cursr: is not a profile of the gateway \(gateway\.profiles\)/);
      const res = await runToolport(['serve', '--config', file, '--listen', '127.0.0.1:0'], { timeoutMs: 30000 });
      assert.equal(res.status, 2, res.stderr);
      assert.match(res.stderr, /registry\.serve\.profiles\.cursr: is not a profile of the gateway/);
      assert.doesNotMatch(res.stderr, /upstream|connect/i, 'no source was started');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
