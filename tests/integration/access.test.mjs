// Access rules by principal (`access:`, docs/authorization.md): OAuth users (sub and a groups
// claim, tokens signed by the test authorization server's JWKS), a static bearer token
// (bearer:<digest>), a gateway profile and the stdio client each see only the tools the
// rules let them call, and a call of a hidden tool is the tool error MCP_TOOL_FORBIDDEN
// naming the rule, on Streamable HTTP (the official SDK), in a JSON-RPC batch, on legacy
// SSE and on stdio; the audit log records the denial; `config check` and the console show
// the rules.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { TOOLPORT_BIN, startHttpServer, initializeSession, post, runToolport, waitFor } from './lib/harness.mjs';
import { startAuthServer, makeKey } from './lib/auth_server.mjs';

const BOT_TOKEN = 'access-test-bot-token-5b1d0c9e';

const rules = [
  'access:',
  '  rules:',
  '    - name: admins-all',
  '      effect: allow',
  '      groups: [admins]',
  '    - name: interns-no-errors',
  '      effect: deny',
  '      principals: ["intern-*"]',
  '      tools: ["test_error_*"]',
  '    - name: small-no-text',
  '      effect: deny',
  '      profiles: [small]',
  '      tools: [test_simple_text]',
  '    - name: bots-no-text',
  '      effect: deny',
  '      principals: ["bearer:*"]',
  '      tools: [test_simple_text]',
];

function config(as, auditFile) {
  return [
    'http:',
    '  bearer_tokens_env: ACCESS_TEST_TOKENS',
    'auth:',
    `  issuer: ${as.issuer}`,
    '  allow_http: true',
    'gateway:',
    '  profiles:',
    '    small: {tools: ["test_simple_*", "test_error_*"]}',
    'audit:',
    '  enabled: true',
    `  path: ${auditFile}`,
    '  flush_interval_ms: 100',
    ...rules,
    '',
  ].join('\n');
}

const toolNames = (list) => list.tools.map((t) => t.name).sort();

function assertForbidden(result, rule) {
  assert.equal(result.isError, true, JSON.stringify(result));
  assert.equal(result.structuredContent?.error_code, 'MCP_TOOL_FORBIDDEN', JSON.stringify(result));
  assert.equal(result.structuredContent.rule, rule);
  assert.match(result.content[0].text, new RegExp(`access rule "${rule}" denies`));
}

describe('access rules by principal', () => {
  let as, server, resource, dir, auditFile;
  const jwt = (sub, claims = {}) => as.token({ sub, aud: resource, ...claims });
  const bearer = (token) => ({ Authorization: `Bearer ${token}` });

  async function connect(token, urlPath = '/mcp') {
    const client = new Client({ name: 'access-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.base + urlPath), { requestInit: { headers: bearer(token) } }),
    );
    return client;
  }

  before(async () => {
    as = await startAuthServer();
    as.keys = [makeKey('ec', 'key-1')];
    dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-access-'));
    auditFile = path.join(dir, 'audit.jsonl');
    server = await startHttpServer({ config: config(as, auditFile), env: { ACCESS_TEST_TOKENS: BOT_TOKEN } });
    resource = `http://127.0.0.1:${server.port}/mcp`;
  });

  after(async () => {
    await server?.stop();
    await as?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('two principals see different tools/list; the denied call is MCP_TOOL_FORBIDDEN naming the rule', async () => {
    const admin = await connect(jwt('intern-carol', { groups: ['staff', 'admins'] }));
    const intern = await connect(jwt('intern-alice', { groups: ['staff'] }));
    try {
      const adminTools = toolNames(await admin.listTools());
      const internTools = toolNames(await intern.listTools());
      assert.ok(adminTools.includes('test_error_handling'), 'admins-all comes first: the admin intern sees it');
      assert.ok(!internTools.includes('test_error_handling'), internTools.join());
      assert.ok(internTools.includes('test_simple_text'));
      assert.deepEqual(
        adminTools.filter((n) => !internTools.includes(n)),
        ['test_error_handling'],
        'only the denied tool differs',
      );

      const refused = await intern.callTool({ name: 'test_error_handling', arguments: {} });
      assertForbidden(refused, 'interns-no-errors');
      assert.equal(refused.structuredContent.principal, 'intern-alice');
      const ok = await intern.callTool({ name: 'test_simple_text', arguments: {} });
      assert.equal(ok.isError ?? false, false, JSON.stringify(ok));
    } finally {
      await admin.close();
      await intern.close();
    }
  });

  it('a JSON-RPC batch cannot bypass the rules', async () => {
    const headers = bearer(jwt('intern-bob'));
    const { sessionId } = await initializeSession(server, '2025-03-26', headers);
    const call = (id, name) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });
    const res = await post(
      server,
      [call(11, 'test_error_handling'), call(12, 'test_simple_text'), { jsonrpc: '2.0', id: 13, method: 'tools/list' }],
      { sessionId, protocolVersion: '2025-03-26', headers },
    );
    assert.equal(res.status, 200, res.text);
    const byId = Object.fromEntries(res.messages.map((m) => [m.id, m]));
    // 2025-03-26 has no structuredContent: the text carries the code and the rule.
    assert.equal(byId[11].result.isError, true, JSON.stringify(byId[11]));
    assert.match(byId[11].result.content[0].text, /^MCP_TOOL_FORBIDDEN: Forbidden: the access rule "interns-no-errors" denies intern-bob/);
    assert.equal(byId[12].result.isError ?? false, false, JSON.stringify(byId[12]));
    assert.ok(!byId[13].result.tools.some((t) => t.name === 'test_error_handling'));
  });

  it('the stateless revision (2026-07-28): the same rules per request, groups as a string claim too', async () => {
    const statelessCall = (token, name) =>
      post(
        server,
        {
          jsonrpc: '2.0',
          id: 21,
          method: 'tools/call',
          params: {
            name,
            arguments: {},
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientInfo': { name: 'access-stateless', version: '1' },
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        },
        { protocolVersion: '2026-07-28', headers: { ...bearer(token), 'Mcp-Method': 'tools/call', 'Mcp-Name': name } },
      );
    const refused = await statelessCall(jwt('intern-erin'), 'test_error_handling');
    assert.equal(refused.status, 200, refused.text);
    assertForbidden(refused.json.result, 'interns-no-errors');
    // "staff admins" (a space-separated string claim) puts the same intern in admins: allowed.
    const admitted = await statelessCall(jwt('intern-erin', { groups: 'staff admins' }), 'test_error_handling');
    assert.equal(admitted.status, 200, admitted.text);
    assert.notEqual(admitted.json.result.structuredContent?.error_code, 'MCP_TOOL_FORBIDDEN', admitted.text);
  });

  it('a gateway profile rule applies at the profile\'s URL only', async () => {
    const token = jwt('dana');
    const small = await connect(token, '/mcp/small');
    const plain = await connect(token);
    try {
      const smallTools = toolNames(await small.listTools());
      assert.ok(smallTools.length > 0);
      assert.ok(smallTools.every((n) => n.startsWith('test_simple_') || n.startsWith('test_error_')), smallTools.join());
      assert.ok(!smallTools.includes('test_simple_text'), smallTools.join());
      assertForbidden(await small.callTool({ name: 'test_simple_text', arguments: {} }), 'small-no-text');
      assert.ok(toolNames(await plain.listTools()).includes('test_simple_text'));
      const ok = await plain.callTool({ name: 'test_simple_text', arguments: {} });
      assert.equal(ok.isError ?? false, false);
    } finally {
      await small.close();
      await plain.close();
    }
  });

  it('legacy SSE with a static bearer token: the token is a principal (bearer:<digest>)', async () => {
    const headers = bearer(BOT_TOKEN);
    const client = new Client({ name: 'access-sse', version: '1.0.0' });
    await client.connect(
      new SSEClientTransport(new URL(`${server.base}/sse`), {
        requestInit: { headers },
        eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...init?.headers, ...headers } }) },
      }),
    );
    try {
      const tools = toolNames(await client.listTools());
      assert.ok(!tools.includes('test_simple_text'), tools.join());
      assert.ok(tools.includes('test_error_handling'));
      const refused = await client.callTool({ name: 'test_simple_text', arguments: {} });
      assertForbidden(refused, 'bots-no-text');
      assert.match(refused.structuredContent.principal, /^bearer:[0-9a-f]{16}$/);
    } finally {
      await client.close();
    }
  });

  it('the audit log records a denied call as denied, with its code and caller', async () => {
    let denied = [];
    await waitFor('the denied calls in the audit log', () => {
      if (!existsSync(auditFile)) return false;
      denied = readFileSync(auditFile, 'utf8')
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l))
        .filter((r) => r.outcome === 'denied');
      return denied.length >= 4;
    });
    const intern = denied.find((r) => r.subject === 'intern-alice');
    assert.ok(intern, JSON.stringify(denied));
    assert.equal(intern.method, 'tools/call');
    assert.equal(intern.target, 'test_error_handling');
    assert.equal(intern.code, 'MCP_TOOL_FORBIDDEN');
    // GET /audit filters by the new outcome (the server's own token is an operator's).
    const res = await fetch(`${server.base}/audit?outcome=denied&tool=test_error_handling`, { headers: bearer(BOT_TOKEN) });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.ok(body.records.length >= 2, JSON.stringify(body));
    assert.ok(body.records.every((r) => r.outcome === 'denied' && r.target === 'test_error_handling'));
  });

  it('the console shows the rules in force', async () => {
    const res = await fetch(`${server.base}/console/api/config`, { headers: bearer(BOT_TOKEN) });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.deepEqual(body.effective.served.access.rules.map((r) => `${r.effect}:${r.name}`), [
      'allow:admins-all',
      'deny:interns-no-errors',
      'deny:small-no-text',
      'deny:bots-no-text',
    ]);
    assert.equal(body.effective.served.access.default, 'allow');
    assert.equal(body.effective.settings.access.rules[1].principals[0], 'intern-*');
    assert.equal(body.check.ok, true, JSON.stringify(body.check));
  });
});

describe('access rules on stdio and in config check', () => {
  it('stdio: the client is the configured local principal', async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-access-stdio-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'toolport.yaml');
    writeFileSync(
      file,
      'access:\n  stdio_principal: local-me\n  rules:\n    - {name: local-no-text, effect: deny, principals: [local-me], tools: [test_simple_text]}\n',
    );
    const client = new Client({ name: 'access-stdio', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({ command: TOOLPORT_BIN, args: ['serve', '--stdio', '--packs', 'conformance', '--config', file], stderr: 'pipe' }),
    );
    t.after(() => client.close());
    const tools = toolNames(await client.listTools());
    assert.ok(!tools.includes('test_simple_text'), tools.join());
    assert.ok(tools.includes('test_error_handling'));
    const refused = await client.callTool({ name: 'test_simple_text', arguments: {} });
    assertForbidden(refused, 'local-no-text');
    assert.equal(refused.structuredContent.principal, 'local-me');
  });

  it('a reload reads the rules again; a file that no longer loads keeps those in force', async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-access-reload-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'toolport.yaml');
    const quick = 'reload:\n  min_interval_s: 0\n';
    const denying = (tool) => `${quick}access:\n  rules:\n    - {name: no-${tool}, effect: deny, tools: [${tool}]}\n`;
    const ruleNames = async () => {
      const body = await (await fetch(`${server.base}/console/api/config`)).json();
      return body.effective.served.access.rules.map((r) => r.name);
    };
    writeFileSync(file, denying('test_simple_text'));
    const server = await startHttpServer({ extraArgs: ['--config', file] });
    t.after(() => server.stop());
    const list = async () => {
      const client = new Client({ name: 'access-reload', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      try {
        return toolNames(await client.listTools());
      } finally {
        await client.close();
      }
    };
    const reload = async () => {
      const res = await fetch(`${server.base}/admin/reload`, { method: 'POST' });
      assert.ok(res.status === 202 || res.status === 200, `${res.status} ${await res.text()}`);
    };
    let tools = await list();
    assert.ok(!tools.includes('test_simple_text') && tools.includes('test_error_handling'), tools.join());

    writeFileSync(file, denying('test_error_handling'));
    await reload();
    tools = await list();
    assert.ok(tools.includes('test_simple_text') && !tools.includes('test_error_handling'), tools.join());
    assert.deepEqual(await ruleNames(), ['no-test_error_handling'], 'the console shows the rules in force');

    writeFileSync(file, `${quick}access:\n  rules:\n    - {effect: maybe}\n`);
    await reload();
    await waitFor('the kept rules in the log', () =>
      /the access rules in force are kept: .*access\.rules\[0\]\.effect: must be allow or deny/.test(server.logs()),
    );
    tools = await list();
    assert.ok(!tools.includes('test_error_handling'), 'the last good rules stay');
    assert.deepEqual(await ruleNames(), ['no-test_error_handling']);
  });

  it('config check summarizes the rules, warns about unknown sources and refuses bad patterns', async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-access-check-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'toolport.yaml');
    writeFileSync(
      file,
      'packs: [conformance]\naccess:\n  default: deny\n  rules:\n    - {effect: allow, sources: [conformance]}\n    - {effect: allow, sources: [githb]}\n',
    );
    const ok = await runToolport(['config', 'check', file]);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /access: 2 rule\(s\) \(2 allow, 0 deny\), first match wins, default deny/);
    assert.match(ok.stderr, /warning: .*:6: access\.rules\[1\]\.sources: "githb" is not a configured source/);

    writeFileSync(file, 'access:\n  rules:\n    - effect: deny\n      tools: ["tool_[ab]"]\n');
    const bad = await runToolport(['config', 'check', file]);
    assert.equal(bad.status, 2, bad.stderr);
    assert.match(bad.stderr, /:4: access\.rules\[0\]\.tools: "tool_\[ab\]": brackets and braces are not wildcards/);
  });
});
