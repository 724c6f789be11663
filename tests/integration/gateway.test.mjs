// The gateway in the real binary: upstream MCP servers — the official server-everything
// (npm) and the fault-injecting fixture (tests/fixtures/upstream) over stdio and
// Streamable HTTP, and a second toolport — aggregated behind one Toolport, driven by the
// official TypeScript SDK client. Names and collisions (the first-configured upstream keeps a
// shared name), calls, reads and prompts through,
// progress, list_changed, sampling and elicitation forwarded to the client that caused
// them, the breaker, the budget under 20 parallel calls, the size cap, restart and
// reconnect, and an imported mcpServers file.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import {
  ToolListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  LoggingMessageNotificationSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  startHttpServer, runToolport, sleep, waitFor, TOOLPORT_BIN, freePort, track, request, post, assertHealthy, LATEST,
} from './lib/harness.mjs';
import { spawn } from 'node:child_process';
import { FAULTY_SERVER, startFaultyHttp } from '../fixtures/upstream/faulty_server.mjs';
import { NODE, EVERYTHING, NAME, yamlString, text, code } from './lib/gateway_setup.mjs';
import { EARLY_ANSWER_UPSTREAM } from './lib/early_answer_upstream.mjs';

async function connect(server, { capabilities = {}, path: p = '/mcp', token = null } = {}) {
  const client = new Client({ name: 'toolport-it-gateway', version: '1.0.0' }, { capabilities });
  const changes = [];
  const updates = [];
  const logs = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => changes.push(Date.now()));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.base}${p}`), { requestInit }));
  return { client, changes, updates, logs };
}

describe('gateway: server-everything and the faulty fixture over stdio, the fixture over HTTP', () => {
  let server;
  let faultyHttp;
  let session;

  before(async () => {
    faultyHttp = await startFaultyHttp(['--name', 'remote']);
    server = await startHttpServer({
      packs: '',
      config: `
upstreams:
  remote:
    url: ${faultyHttp.url}
    deny: ["crash", "never"]
  everything:
    command: ${yamlString(NODE)}
    args: [${yamlString(EVERYTHING)}, stdio]
  faulty:
    command: ${yamlString(NODE)}
    args: [${yamlString(FAULTY_SERVER)}, stdio, --downstream-calls, "2"]
    max_response_bytes: 200000
services:
  faulty: {breaker: {failure_threshold: 3, cooldown_s: 1}}
pipeline:
  cache: {enabled: false}
  # One session runs every test: its budget (seed 002: 120 a user request, 12 a call that
  # reports nothing) is not what these tests are about.
  budget: {max_downstream_calls_per_request: 0}
`,
    });
    session = await connect(server, {
      capabilities: { sampling: {}, elicitation: {} },
    });
    // Both stdio children start at once; the HTTP fixture too.
    await waitFor('every upstream listed', async () => {
      const { tools } = await session.client.listTools();
      return tools.some((t) => t.name === 'get-sum') && tools.some((t) => t.name === 'faulty_echo') &&
        tools.some((t) => t.name === 'slow');
    });
  });

  after(async () => {
    await session?.client.close();
    await server?.stop();
    await faultyHttp?.stop();
  });

  it('serves every upstream tool once, prefixed only where an earlier upstream has the name, within 64 safe characters', async () => {
    const { tools } = await session.client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of names) assert.match(name, NAME);
    assert.equal(new Set(names).size, names.length);
    // echo is everyone's: remote, configured first, keeps the name, the others get their
    // prefix; get-sum is only everything's: kept.
    for (const n of ['echo', 'everything_echo', 'faulty_echo', 'get-sum', 'slow', 'faulty_slow']) {
      assert.ok(names.includes(n), `${n} in ${names.join(', ')}`);
    }
    assert.ok(!names.includes('remote_echo') && !names.includes('remote_slow'));
    // deny filters the HTTP upstream's tools only: crash and never are faulty's alone.
    assert.ok(names.includes('crash') && names.includes('never'), names.join(', '));
    assert.ok(!names.includes('faulty_crash') && !names.includes('faulty_never'), names.join(', '));
    assert.deepEqual(names, [...names].sort(), 'a stable order');
    const echo = tools.find((t) => t.name === 'faulty_echo');
    assert.equal(echo.inputSchema.type, 'object');
    assert.ok(echo.inputSchema.properties.text);
    // The upstream's icons are served as they are.
    assert.deepEqual(echo.icons, [{ src: 'https://example.com/echo.png', mimeType: 'image/png', sizes: ['48x48'] }]);
  });

  it('forwards calls and results, _meta included, to each upstream', async () => {
    const sum = await session.client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } });
    assert.match(text(sum), /42/);
    const echo = await session.client.callTool({ name: 'faulty_echo', arguments: { text: 'through the gateway' } });
    assert.equal(text(echo), 'through the gateway');
    assert.equal(echo._meta.downstream_api_calls, 2, 'the upstream reported figure is kept');
    const remote = await session.client.callTool({ name: 'echo', arguments: { text: 'over http' } });
    assert.equal(text(remote), 'over http');
  });

  it('checks arguments against the upstream schema before sending', async () => {
    const result = await session.client.callTool({ name: 'faulty_echo', arguments: { text: 42 } });
    assert.equal(result.isError, true);
    assert.match(code(result), /INVALID|MISSING/);
  });

  it('passes an upstream tool error on as a result and a JSON-RPC error as UPSTREAM_ERROR', async () => {
    const toolError = await session.client.callTool({ name: 'tool_error', arguments: {} });
    assert.equal(toolError.isError, true);
    const failed = await session.client.callTool({ name: 'fail', arguments: {} });
    assert.equal(code(failed), 'UPSTREAM_ERROR');
    assert.match(text(failed), /upstream failure/);
  });

  it('forwards progress notifications of a call', async () => {
    const seen = [];
    const result = await session.client.callTool({ name: 'faulty_slow', arguments: { ms: 300, steps: 3 } }, undefined, {
      onprogress: (p) => seen.push(p),
    });
    assert.equal(result.isError ?? false, false);
    assert.deepEqual(seen.map((p) => p.progress), [1, 2, 3]);
    assert.equal(seen[0].total, 3);
  });

  it('cancels the upstream call when the client cancels', async () => {
    const controller = new AbortController();
    const call = session.client.callTool({ name: 'never', arguments: {} }, undefined, { signal: controller.signal })
      .catch((e) => e);
    await sleep(200);
    controller.abort('enough');
    const outcome = await call;
    assert.ok(outcome instanceof Error);
    // The connection is fine for the next call.
    const echo = await session.client.callTool({ name: 'faulty_echo', arguments: { text: 'after cancel' } });
    assert.equal(text(echo), 'after cancel');
  });

  it('forwards sampling and elicitation requests to the client whose call caused them', async () => {
    session.client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
      role: 'assistant',
      content: { type: 'text', text: `sampled: ${request.params.messages.length}` },
      model: 'test-model',
    }));
    session.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { answer: 'yes' } }));
    const sampled = await session.client.callTool({ name: 'faulty_ask_sampling', arguments: { prompt: 'hi' } });
    assert.match(text(sampled), /sampled: 1/);
    const elicited = await session.client.callTool({ name: 'ask_elicitation', arguments: {} });
    assert.match(text(elicited), /"accept"/);
  });

  it('refuses an upstream request the calling client cannot answer', async () => {
    const plain = await connect(server);  // declares no sampling
    try {
      // Over HTTP the request is known to be about this call: -32021 naming the capability,
      // as a server of its own would say (the upstream hears a refusal).
      await assert.rejects(plain.client.callTool({ name: 'ask_sampling', arguments: {} }), (e) => {
        assert.equal(e.code, -32021);
        assert.match(e.message, /sampling/);
        return true;
      });
      // Over stdio it is only presumed: the upstream is refused and its tool says so.
      const stdio = await plain.client.callTool({ name: 'faulty_ask_sampling', arguments: {} });
      assert.equal(stdio.isError, true);
      assert.match(text(stdio), /does not support sampling/);
      const after = await plain.client.callTool({ name: 'faulty_echo', arguments: { text: 'still fine' } });
      assert.equal(text(after), 'still fine');
    } finally {
      await plain.client.close();
    }
  });

  it('forwards log messages of a call to its client', async () => {
    await session.client.setLoggingLevel('debug');
    await session.client.callTool({ name: 'faulty_log', arguments: { level: 'warning', message: 'careful' } });
    await waitFor('the log message', () => session.logs.find((l) => JSON.stringify(l.data).includes('careful')));
    const log = session.logs.find((l) => JSON.stringify(l.data).includes('careful'));
    assert.equal(log.level, 'warning');
    assert.match(log.logger, /^faulty/);
  });

  it('re-lists an upstream after its list_changed and announces the change', async () => {
    const before = session.changes.length;
    await session.client.callTool({ name: 'faulty_add_tool', arguments: { name: 'brand_new' } });
    await waitFor('list_changed', () => session.changes.length > before);
    const { tools } = await session.client.listTools();
    assert.ok(tools.some((t) => t.name === 'brand_new'));
    const result = await session.client.callTool({ name: 'brand_new', arguments: { text: 'new' } });
    assert.equal(text(result), 'new');
  });

  it('reads resources, follows subscriptions and gets prompts through', async () => {
    const { resources } = await session.client.listResources();
    const uris = resources.map((r) => r.uri);
    // Both fixtures list faulty://static/hello: each is rewritten with its prefix.
    assert.ok(uris.includes('faulty+faulty://static/hello') && uris.includes('remote+faulty://static/hello'), uris.join(' '));
    const read = await session.client.readResource({ uri: 'remote+faulty://static/hello' });
    assert.equal(read.contents[0].text, 'hello');
    assert.equal(read.contents[0].uri, 'remote+faulty://static/hello', 'the contents carry the URI the client read');
    const { resourceTemplates } = await session.client.listResourceTemplates();
    assert.ok(resourceTemplates.some((t) => t.uriTemplate === 'faulty+faulty://item/{id}'));
    const item = await session.client.readResource({ uri: 'faulty+faulty://item/7' });
    assert.match(item.contents[0].text, /7/);

    await session.client.subscribeResource({ uri: 'faulty+faulty://static/hello' });
    await session.client.callTool({ name: 'faulty_touch', arguments: { uri: 'faulty://static/hello' } });
    await waitFor('resources/updated', () => session.updates.includes('faulty+faulty://static/hello'));

    const { prompts } = await session.client.listPrompts();
    const names = prompts.map((p) => p.name);
    assert.ok(names.includes('faulty_greeting') && names.includes('greeting'), names.join(' '));
    const prompt = await session.client.getPrompt({ name: 'greeting', arguments: { name: 'Ada' } });
    assert.match(JSON.stringify(prompt.messages), /Hello, Ada!/);
  });

  it('refuses an answer over max_response_bytes while reading it, and the upstream keeps serving', async () => {
    const big = await session.client.callTool({ name: 'faulty_huge', arguments: { bytes: 500000 } });
    assert.equal(code(big), 'MCP_RESPONSE_TOO_LARGE');
    const small = await session.client.callTool({ name: 'faulty_huge', arguments: { bytes: 1000 } });
    assert.equal(text(small).length, 1000);
  });

  it('restarts a crashed stdio upstream and serves it again', async () => {
    const crashName = (await session.client.listTools()).tools.find((t) => /(^|_)crash$/.test(t.name) && !t.name.startsWith('remote')).name;
    const crashed = await session.client.callTool({ name: crashName, arguments: {} });
    assert.equal(code(crashed), 'UPSTREAM_ERROR');
    const echo = await waitFor('the upstream back', async () => {
      const r = await session.client.callTool({ name: 'faulty_echo', arguments: { text: 'back' } });
      return r.isError ? null : r;
    });
    assert.equal(text(echo), 'back');
  });

  it('opens the breaker after 3 consecutive failures and closes it after a good probe', async () => {
    // Fail three times: the JSON-RPC error of `fail` is a failure of the service.
    const fail = 'faulty_fail';  // (remote, configured first, keeps `fail`)
    for (let i = 0; i < 3; i++) {
      const r = await session.client.callTool({ name: fail, arguments: {} });
      assert.equal(code(r), 'UPSTREAM_ERROR');
    }
    const refused = await session.client.callTool({ name: 'faulty_echo', arguments: { text: 'x' } });
    assert.equal(code(refused), 'SERVER_UNHEALTHY');
    assert.ok(refused.structuredContent.retry_after_ms > 0);
    // Other upstreams are not affected.
    const other = await session.client.callTool({ name: 'echo', arguments: { text: 'fine' } });
    assert.equal(text(other), 'fine');
    await sleep(1100);
    const probe = await session.client.callTool({ name: 'faulty_echo', arguments: { text: 'probe' } });
    assert.equal(text(probe), 'probe');
  });

  it('logs an orchestration_summary with each upstream\'s health when a session ends', async () => {
    const other = await connect(server);
    await other.client.callTool({ name: 'echo', arguments: { text: 'summary' } });
    await other.client.transport.terminateSession();  // DELETE: the session ends now
    await other.client.close();
    const line = await waitFor('the summary', () =>
      server.logs().split('\n').find((l) => l.includes('"orchestration_summary"') && l.includes('"server_id":"remote"')));
    const summary = JSON.parse(line);
    const remote = summary.server_health.find((h) => h.server_id === 'remote');
    assert.equal(remote.healthy, true);
    assert.ok(remote.total_calls >= 1);
    assert.equal(typeof remote.failure_rate, 'number');
    assert.equal(typeof remote.avg_response_ms, 'number');
  });

  it('shows each upstream on /health', async () => {
    const res = await fetch(`${server.base}/health`);
    const body = await res.json();
    const components = JSON.stringify(body);
    for (const name of ['everything', 'faulty', 'remote']) assert.match(components, new RegExp(`"${name}"`));
    assert.match(components, /connected \(20\d\d-\d\d-\d\d\)/);
    // /metrics: each upstream's connection and its calls by outcome, with response times.
    const metrics = await (await fetch(`${server.base}/metrics`)).text();
    for (const name of ['everything', 'faulty', 'remote']) {
      assert.match(metrics, new RegExp(`toolport_upstream_up\\{upstream="${name}"\\} 1`));
    }
    assert.match(metrics, /toolport_upstream_connections_total\{upstream="faulty"\} [2-9]/, 'faulty was restarted');
    assert.match(metrics, /toolport_service_calls_total\{outcome="failure",service="faulty"\} [3-9]/);
    assert.match(metrics, /toolport_service_calls_total\{outcome="success",service="remote"\} \d+/);
    assert.match(metrics, /toolport_service_response_seconds_count\{service="everything"\} \d+/);
  });
});

describe('gateway: budgets across upstream calls', () => {
  it('never overspends a small budget under 20 parallel calls', async (t) => {
    const server = await startHttpServer({
      packs: '',
      config: `
upstreams:
  faulty:
    command: ${yamlString(NODE)}
    args: [${yamlString(FAULTY_SERVER)}, stdio, --downstream-calls, "1"]
    downstream_calls_estimate: 1
pipeline:
  cache: {enabled: false}
  budget: {max_downstream_calls_per_request: 5}
`,
    });
    t.after(() => server.stop());
    const { client } = await connect(server);
    t.after(() => client.close());
    await waitFor('the upstream', async () => (await client.listTools()).tools.some((tool) => tool.name === 'echo'));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => client.callTool({ name: 'echo', arguments: { text: `call ${i}` } })),
    );
    const ok = results.filter((r) => !r.isError).length;
    const refused = results.filter((r) => code(r) === 'MCP_BUDGET_EXCEEDED').length;
    assert.equal(ok, 5, `${ok} calls went through`);
    assert.equal(refused, 15);
  });
});

describe('gateway: a second toolport as an upstream, and an imported mcpServers file', () => {
  it('serves the tools of a toolport behind a toolport, with an upstream that is down at first', async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-gw-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'claude_desktop_config.json');
    writeFileSync(file, JSON.stringify({
      mcpServers: {
        'inner toolport': { command: TOOLPORT_BIN, args: ['serve', '--stdio', '--packs', 'conformance'] },
        broken: { command: '/nonexistent/server', args: [] },
        'from-env': { command: NODE, args: [FAULTY_SERVER, 'stdio', '--name', '${env:GW_TEST_NAME}'] },
      },
    }));
    const server = await startHttpServer({ packs: '', extraArgs: ['--import', file], env: { GW_TEST_NAME: 'envname' } });
    t.after(() => server.stop());
    const { client } = await connect(server);
    t.after(() => client.close());
    const tools = await waitFor('the inner toolport', async () => {
      const { tools } = await client.listTools();
      return tools.some((tool) => tool.name === 'test_simple_text') && tools.some((tool) => /echo/.test(tool.name)) ? tools : null;
    });
    const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
    assert.equal(result.isError ?? false, false);
    const echo = tools.find((tool) => tool.description?.startsWith('envname:'));
    assert.ok(echo, 'the ${env:...} value reached the fixture');
    // The broken upstream is on /health as reconnecting, and took nothing else down.
    const health = await (await fetch(`${server.base}/health`)).json();
    assert.match(JSON.stringify(health), /"broken"/);
    assert.match(JSON.stringify(health), /reconnecting/);
  });

  it('`toolport list --config` shows the aggregate', async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-gw-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'gw.yaml');
    writeFileSync(file, `
gateway: {prefix_mode: always, separator: "__"}
upstreams:
  fx:
    command: [${yamlString(NODE)}, ${yamlString(FAULTY_SERVER)}, stdio, --tools, "echo,slow"]
`);
    const out = await runToolport(['list', '--config', file]);
    assert.equal(out.status, 0, out.stderr);
    assert.match(out.stdout, /fx__echo/);
    assert.match(out.stdout, /fx__slow/);
    assert.doesNotMatch(out.stdout, /fx__crash/);
  });
});

describe('gateway: profiles and tool search', () => {
  const upstreams = `
upstreams:
  everything:
    command: ${yamlString(NODE)}
    args: [${yamlString(EVERYTHING)}, stdio]
  faulty:
    command: ${yamlString(NODE)}
    args: [${yamlString(FAULTY_SERVER)}, stdio]
`;

  it('serves a profile at /mcp/<profile> with only its tools, and refuses calls outside it', async (t) => {
    const server = await startHttpServer({
      packs: '',
      config: `${upstreams}
gateway:
  profiles:
    small: {tools: ["get-sum", "faulty_*"]}
    only_everything: {upstreams: [everything]}
`,
    });
    t.after(() => server.stop());
    const full = await connect(server);
    t.after(() => full.client.close());
    const all = await waitFor('both upstreams', async () => {
      const { tools } = await full.client.listTools();
      return tools.some((x) => x.name === 'get-sum') && tools.some((x) => x.name === 'faulty_echo') ? tools : null;
    });

    const small = await connect(server, { path: '/mcp/small' });
    t.after(() => small.client.close());
    const { tools } = await small.client.listTools();
    const names = tools.map((x) => x.name);
    assert.ok(names.includes('get-sum') && names.includes('faulty_echo'));
    assert.ok(names.every((n) => n === 'get-sum' || n.startsWith('faulty_')), names.join(' '));
    assert.ok(names.length < all.length);
    const sum = await small.client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } });
    assert.match(text(sum), /3/);
    await assert.rejects(small.client.callTool({ name: 'echo', arguments: { message: 'x' } }), /Unknown tool/);

    const everythingOnly = await connect(server, { path: '/mcp/only_everything' });
    t.after(() => everythingOnly.client.close());
    const listed = (await everythingOnly.client.listTools()).tools.map((x) => x.name);
    assert.ok(listed.includes('echo') && !listed.some((n) => n.startsWith('faulty_')));

    // An unknown profile is not an endpoint; a session of one URL is not reachable from another.
    const res = await fetch(`${server.base}/mcp/nope`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    assert.equal(res.status, 404);
    const sid = small.client.transport.sessionId;
    const other = await fetch(`${server.base}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(other.status, 404);
  });

  // Profile tokens come from the environment only; these stand for what an operator exports.
  const tokens = { TP_SMALL_TOKEN: 'small-secret-1f9c', TP_EV_A: 'everything-secret-a7', TP_EV_B: 'everything-secret-b3', TP_ADMIN: 'admin-secret-55e' };
  const rawPost = (server, p, token, body, session) =>
    fetch(`${server.base}${p}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
        ...(session ? { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-11-25' } : {}),
      },
      body: JSON.stringify(body),
    });
  const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } };

  // A gateway with two token-selected profiles; `everythingTokens` is how the second names its tokens.
  const startProfileGateway = async (t, everythingTokens) => {
    const server = await startHttpServer({
      packs: '',
      env: tokens,
      config: `${upstreams}
gateway:
  profiles:
    small: {tools: ["get-sum", "faulty_*"], token_env: TP_SMALL_TOKEN}
    only_everything: {upstreams: [everything], ${everythingTokens}}
`,
    });
    t.after(() => server.stop());
    return server;
  };

  it('a profile token selects its profile at /mcp, is refused at another profile\'s path, and turns auth on', async (t) => {
    const server = await startProfileGateway(t, 'token_envs: [TP_EV_A, TP_EV_B]');
    // Profile tokens alone turn bearer auth on: no token, or a wrong one, is 401.
    assert.equal((await rawPost(server, '/mcp', null, initialize)).status, 401);
    assert.equal((await rawPost(server, '/mcp', 'not-a-token', initialize)).status, 401);
    assert.equal((await rawPost(server, '/mcp/small', null, initialize)).status, 401);

    const small = await connect(server, { token: tokens.TP_SMALL_TOKEN });
    t.after(() => small.client.close());
    const names = await waitFor('both upstreams in the small profile', async () => {
      const listed = (await small.client.listTools()).tools.map((x) => x.name);
      return listed.includes('get-sum') && listed.includes('faulty_echo') ? listed : null;
    });
    assert.ok(names.every((n) => n === 'get-sum' || n.startsWith('faulty_')), names.join(' '));
    assert.match(text(await small.client.callTool({ name: 'get-sum', arguments: { a: 40, b: 2 } })), /42/);
    await assert.rejects(small.client.callTool({ name: 'echo', arguments: { message: 'x' } }), /Unknown tool/);

    // Its own profile's path serves it; another profile's path is refused with the reason.
    const own = await connect(server, { token: tokens.TP_SMALL_TOKEN, path: '/mcp/small' });
    t.after(() => own.client.close());
    assert.deepEqual((await own.client.listTools()).tools.map((x) => x.name).sort(), [...names].sort());
    const refused = await rawPost(server, '/mcp/only_everything', tokens.TP_SMALL_TOKEN, initialize);
    assert.equal(refused.status, 403);
    const body = await refused.json();
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(body.error.code, -32600);
    assert.match(body.error.message, /profile "small".*not served the profile "only_everything"/);
    await assert.rejects(connect(server, { token: tokens.TP_SMALL_TOKEN, path: '/mcp/only_everything' }), /Forbidden: .*profile \\"small\\"/);

    // Either of a profile's tokens selects it.
    for (const token of [tokens.TP_EV_A, tokens.TP_EV_B]) {
      const ev = await connect(server, { token });
      const listed = (await ev.client.listTools()).tools.map((x) => x.name);
      await ev.client.close();
      assert.ok(listed.includes('echo') && !listed.some((n) => n.startsWith('faulty_')), listed.join(' '));
    }
    // A session stays bound to its token: the other profile's token does not find it.
    const stolen = await rawPost(server, '/mcp', tokens.TP_EV_A, { jsonrpc: '2.0', id: 5, method: 'tools/list' }, small.client.transport.sessionId);
    assert.equal(stolen.status, 404);
    // Nor is a profile token the server's: /metrics stays the server's own.
    assert.equal((await fetch(`${server.base}/metrics`, { headers: { Authorization: `Bearer ${tokens.TP_SMALL_TOKEN}` } })).status, 403);
    for (const secret of Object.values(tokens)) assert.ok(!server.logs().includes(secret), 'a token in the log');
  });

  it('a profile token selects its profile over the legacy HTTP+SSE transport (/sse), and a wrong token is refused', async (t) => {
    const server = await startProfileGateway(t, 'token_env: TP_EV_A');
    // The SDK's SSE client sends requestInit's headers on GET /sse and on every POST /messages.
    const overSse = async (token) => {
      const client = new Client({ name: 'toolport-it-gateway-sse', version: '1.0.0' });
      const transport = new SSEClientTransport(new URL(`${server.base}/sse`), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      });
      await client.connect(transport);
      t.after(() => client.close());
      return { client, transport };
    };
    const small = await overSse(tokens.TP_SMALL_TOKEN);
    const overSseNames = await waitFor('the small profile over SSE', async () => {
      const { tools } = await small.client.listTools();
      return tools.some((x) => x.name === 'get-sum') && tools.some((x) => x.name === 'faulty_echo') ? tools.map((x) => x.name) : null;
    });
    // Only the profile's tools, the same the token is served at /mcp.
    assert.ok(overSseNames.every((n) => n === 'get-sum' || n.startsWith('faulty_')), overSseNames.join(' '));
    const viaMcp = await connect(server, { token: tokens.TP_SMALL_TOKEN });
    t.after(() => viaMcp.client.close());
    assert.deepEqual([...overSseNames].sort(), (await viaMcp.client.listTools()).tools.map((x) => x.name).sort());
    assert.equal(text(await small.client.callTool({ name: 'faulty_echo', arguments: { text: 'over sse' } })), 'over sse');
    await assert.rejects(small.client.callTool({ name: 'echo', arguments: { message: 'x' } }), /Unknown tool/);
    const everything = await overSse(tokens.TP_EV_A);
    const listed = (await everything.client.listTools()).tools.map((x) => x.name);
    assert.ok(listed.includes('echo') && !listed.some((n) => n.startsWith('faulty_')), listed.join(' '));

    // No token, or one that is nobody's: GET /sse is 401 and the SDK does not connect.
    const anonymous = await request(server, 'GET', { path: '/sse', headers: { Accept: 'text/event-stream' } });
    assert.equal(anonymous.status, 401);
    assert.match(anonymous.headers.get('www-authenticate'), /^Bearer /);
    await assert.rejects(overSse('not-a-token'), (e) => {
      assert.equal(e.code, 401, String(e));
      return true;
    });
    // The small session's POST /messages (the endpoint the server announced; the SDK keeps
    // it in _endpoint) with a wrong token is 401, with the other profile's token 404.
    const messages = small.transport._endpoint.pathname + small.transport._endpoint.search;
    assert.match(messages, /^\/messages\?sessionId=/);
    // (A notification: a reply would reach the SDK's stream as an answer it did not ask for.)
    const note = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'none', reason: 'test' } };
    const wrong = await post(server, note, { path: messages, headers: { Authorization: 'Bearer not-a-token' } });
    assert.equal(wrong.status, 401);
    const stolen = await post(server, note, { path: messages, headers: { Authorization: `Bearer ${tokens.TP_EV_A}` } });
    assert.equal(stolen.status, 404);
    const own = await post(server, note, { path: messages, headers: { Authorization: `Bearer ${tokens.TP_SMALL_TOKEN}` } });
    assert.equal(own.status, 202, 'the session is there for its own token');
    for (const secret of Object.values(tokens)) assert.ok(!server.logs().includes(secret), 'a token in the log');
  });

  it('the server\'s own bearer tokens keep every path beside profile tokens', async (t) => {
    const server = await startHttpServer({
      packs: '',
      env: tokens,
      config: `${upstreams}
http:
  bearer_tokens_env: TP_ADMIN
gateway:
  profiles:
    small: {tools: ["get-sum", "faulty_*"], token_env: TP_SMALL_TOKEN}
`,
    });
    t.after(() => server.stop());
    const admin = await connect(server, { token: tokens.TP_ADMIN });
    t.after(() => admin.client.close());
    const all = await waitFor('both upstreams', async () => {
      const { tools } = await admin.client.listTools();
      return tools.some((x) => x.name === 'echo') && tools.some((x) => x.name === 'faulty_echo') ? tools : null;
    });
    const adminSmall = await connect(server, { token: tokens.TP_ADMIN, path: '/mcp/small' });
    t.after(() => adminSmall.client.close());
    const smallNames = (await adminSmall.client.listTools()).tools.map((x) => x.name);
    assert.ok(smallNames.length < all.length && smallNames.includes('get-sum') && !smallNames.includes('echo'));
    const small = await connect(server, { token: tokens.TP_SMALL_TOKEN });
    t.after(() => small.client.close());
    assert.deepEqual((await small.client.listTools()).tools.map((x) => x.name).sort(), [...smallNames].sort());
    assert.equal((await fetch(`${server.base}/metrics`, { headers: { Authorization: `Bearer ${tokens.TP_ADMIN}` } })).status, 200);
  });

  it('config check names a profile token variable that is not set, with its file and line', async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-it-profiles-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'profiles.yaml');
    const yaml = `${upstreams}
gateway:
  profiles:
    small:
      tools: ["get-sum"]
      token_env: TP_PROFILE_TOKEN_NOT_SET
`;
    writeFileSync(file, yaml);
    const line = yaml.split('\n').findIndex((l) => l.includes('token_env')) + 1;
    const missing = await runToolport(['config', 'check', file], { env: { TP_PROFILE_TOKEN_NOT_SET: '' } });
    assert.equal(missing.status, 2, missing.stdout + missing.stderr);
    assert.match(missing.stderr, new RegExp(`profiles\\.yaml:${line}: .*token_env: environment variable TP_PROFILE_TOKEN_NOT_SET is not set`));
    const ok = await runToolport(['config', 'check', file], { env: { TP_PROFILE_TOKEN_NOT_SET: 'some-secret-x' } });
    assert.equal(ok.status, 0, ok.stderr);
    assert.ok(!(ok.stdout + ok.stderr).includes('some-secret-x'));
  });

  it('tool search answers within the caller\'s profile', async (t) => {
    const server = await startHttpServer({
      packs: '',
      env: tokens,
      config: `${upstreams}
gateway:
  tool_search: true
  profiles:
    small: {tools: ["get-sum", "faulty_*"], token_env: TP_SMALL_TOKEN}
`,
    });
    t.after(() => server.stop());
    const small = await connect(server, { token: tokens.TP_SMALL_TOKEN });
    t.after(() => small.client.close());
    // The meta-tools are in every profile.
    assert.deepEqual((await small.client.listTools()).tools.map((x) => x.name).sort(), ['call_tool', 'search_tools']);
    const found = await waitFor('the small profile indexed', async () => {
      const r = await small.client.callTool({ name: 'search_tools', arguments: { query: 'echo', limit: 50 } });
      return r.structuredContent?.tools.some((x) => x.name === 'faulty_echo') ? r : null;
    });
    const names = found.structuredContent.tools.map((x) => x.name);
    assert.ok(!names.includes('echo'), names.join(' '));
    assert.ok(names.every((n) => n === 'get-sum' || n.startsWith('faulty_')), names.join(' '));
    const everythingListed = await small.client.callTool({ name: 'search_tools', arguments: { query: '', limit: 50 } });
    assert.equal(everythingListed.structuredContent.total_tools, everythingListed.structuredContent.tools.length);
    assert.ok(everythingListed.structuredContent.tools.every((x) => x.name === 'get-sum' || x.name.startsWith('faulty_')));

    assert.match(text(await small.client.callTool({ name: 'call_tool', arguments: { name: 'get-sum', arguments: { a: 1, b: 2 } } })), /3/);
    const outside = await small.client.callTool({ name: 'call_tool', arguments: { name: 'echo', arguments: { message: 'x' } } });
    assert.equal(outside.isError, true);
    assert.equal(code(outside), 'NOT_FOUND');
    assert.match(outside.structuredContent.error, /profile \("small"\)/);
    assert.match(outside.structuredContent.suggestion, /search_tools/);
  });

  it('tool_search mode serves search_tools and call_tool, which reach every upstream tool through the pipeline', async (t) => {
    const server = await startHttpServer({ packs: '', config: `${upstreams}\ngateway: {tool_search: true}\n` });
    t.after(() => server.stop());
    const { client } = await connect(server);
    t.after(() => client.close());
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((x) => x.name).sort(), ['call_tool', 'search_tools']);
    const found = await waitFor('the catalog indexed', async () => {
      const r = await client.callTool({ name: 'search_tools', arguments: { query: 'sum of two numbers' } });
      return r.structuredContent?.total_tools > 20 ? r : null;  // both upstreams
    });
    assert.equal(found.structuredContent.tools[0].name, 'get-sum', JSON.stringify(found.structuredContent.tools.map((x) => x.name)));
    assert.ok(found.structuredContent.tools[0].inputSchema.properties.a);
    assert.ok(found.structuredContent.total_tools > 20);
    const byParam = await client.callTool({ name: 'search_tools', arguments: { query: 'bytes', limit: 3 } });
    assert.ok(byParam.structuredContent.tools.some((x) => x.name === 'huge'), JSON.stringify(byParam.structuredContent));

    const sum = await client.callTool({ name: 'call_tool', arguments: { name: 'get-sum', arguments: { a: 20, b: 22 } } });
    assert.match(text(sum), /42/);
    // The target's own schema is checked.
    const bad = await client.callTool({ name: 'call_tool', arguments: { name: 'get-sum', arguments: { a: 'x' } } });
    assert.equal(bad.isError, true);
    assert.match(code(bad), /INVALID|MISSING/);
    const missing = await client.callTool({ name: 'call_tool', arguments: { name: 'no_such_tool' } });
    assert.equal(code(missing), 'NOT_FOUND');
    assert.match(missing.structuredContent.suggestion, /search_tools/);
  });
});

describe('gateway: an upstream\'s stderr and active pings', () => {
  it('logs the upstream\'s stderr line by line and pings it when asked to', async (t) => {
    const server = await startHttpServer({
      packs: '',
      config: `
upstreams:
  noisy:
    command: ${yamlString(NODE)}
    args: [${yamlString(FAULTY_SERVER)}, stdio, --stderr-noise, --name, noisy]
    ping_interval_ms: 100
`,
    });
    t.after(() => server.stop());
    await waitFor('two pings', () => (server.logs().match(/upstream noisy stderr: \[noisy pid \d+\] request ping/g) ?? []).length >= 2);
    assert.match(server.logs(), /upstream noisy stderr: \[noisy pid \d+\] request initialize/);
  });
});

describe('gateway: a question an upstream asks during a call it answers first', () => {
  it('is given up when the call ends, and the client\'s late answer is dropped', async (t) => {
    const server = await startHttpServer({
      packs: '',
      config: `
upstreams:
  early:
    command: ${yamlString(NODE)}
    args: [${yamlString(EARLY_ANSWER_UPSTREAM)}]
`,
    });
    t.after(() => server.stop());
    const init = await post(server, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: LATEST, capabilities: { roots: {} }, clientInfo: { name: 'early-answer-test', version: '1.0.0' } },
    });
    const sessionId = init.headers.get('mcp-session-id');
    const session = { sessionId, protocolVersion: LATEST };
    await post(server, { jsonrpc: '2.0', method: 'notifications/initialized' }, session);
    const call = (id, name) => post(server, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } }, session);
    await waitFor('the upstream listed', async () => {
      const listed = await post(server, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, session);
      return listed.messages[0]?.result?.tools.some((tool) => tool.name === 'last_answer');
    });

    // Over stdio the question is presumed to be this call's: it goes out on the call's
    // stream, and the call's result follows without waiting for the client.
    const asked = await call(3, 'ask_and_answer');
    const question = asked.messages.find((m) => m.method === 'roots/list');
    assert.ok(question, `the question is relayed: ${asked.text}`);
    const result = asked.messages.find((m) => m.id === 3);
    assert.equal(text(result.result), 'answered');
    // The client answers after the call has ended (its request context is gone).
    const late = await post(server, { jsonrpc: '2.0', id: question.id, result: { roots: [] } }, session);
    assert.ok(late.status < 500, `the late answer: ${late.status} ${late.text}`);
    await assertHealthy(server);
    // The upstream heard that the call ended before its client answered.
    const heard = await call(4, 'last_answer');
    const answer = JSON.parse(text(heard.messages.find((m) => m.id === 4).result));
    assert.equal(answer.error?.code, -32603, JSON.stringify(answer));
  });
});

// server-everything in its HTTP modes, on a free port; resolves once it listens.
async function startEverything(mode) {
  const port = await freePort();
  const child = track(spawn(NODE, [EVERYTHING, mode], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] }));
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  await waitFor(`server-everything ${mode} listening`, () => /listening|running/i.test(err), 15000);
  return { port, stop: () => child.kill('SIGKILL') };
}

describe('gateway: server-everything over Streamable HTTP and over the 2024 HTTP+SSE transport', () => {
  it('serves both, the second prefixed, and forwards calls, progress and reads', async (t) => {
    const http = await startEverything('streamableHttp');
    t.after(() => http.stop());
    const sse = await startEverything('sse');
    t.after(() => sse.stop());
    const server = await startHttpServer({
      packs: '',
      config: `
upstreams:
  ev_http:
    url: http://127.0.0.1:${http.port}/mcp
  ev_sse:
    url: http://127.0.0.1:${sse.port}/sse
    transport: sse
pipeline:
  cache: {enabled: false}
`,
    });
    t.after(() => server.stop());
    const { client } = await connect(server);
    t.after(() => client.close());
    const tools = await waitFor('both upstreams', async () => {
      const { tools } = await client.listTools();
      return tools.some((x) => x.name === 'get-sum') && tools.some((x) => x.name === 'ev_sse_get-sum') ? tools : null;
    });
    // Every name collides: ev_http, configured first, keeps them, ev_sse's are prefixed.
    assert.ok(tools.every((x) => !x.name.startsWith('ev_http_')));
    for (const prefix of ['', 'ev_sse_']) {
      const sum = await client.callTool({ name: `${prefix}get-sum`, arguments: { a: 5, b: 6 } });
      assert.match(text(sum), /11/);
      const echo = await client.callTool({ name: `${prefix}echo`, arguments: { message: `via ${prefix}` } });
      assert.match(text(echo), new RegExp(`via ${prefix}`));
    }
    const seen = [];
    await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 3 } }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });
    assert.ok(seen.length >= 2, `progress: ${JSON.stringify(seen)}`);
    const { resources } = await client.listResources();
    assert.ok(resources.length > 0);
    const first = resources[0];
    const read = await client.readResource({ uri: first.uri });
    assert.ok(read.contents.length > 0);
    const health = JSON.stringify(await (await fetch(`${server.base}/health`)).json());
    assert.match(health, /"ev_http":"connected \(20\d\d-\d\d-\d\d\)"/);
    assert.match(health, /"ev_sse":"connected \(20\d\d-\d\d-\d\d\)"/);
  });

  it('an upstream that answers with something that is not JSON: over HTTP at once, over stdio at its deadline', async (t) => {
    const faultyHttp = await startFaultyHttp(['--name', 'remote']);
    t.after(() => faultyHttp.stop());
    const server = await startHttpServer({
      packs: '',
      config: `
gateway: {prefix_mode: always}
upstreams:
  local:
    command: ${yamlString(NODE)}
    args: [${yamlString(FAULTY_SERVER)}, stdio]
    timeout_ms: 500
  remote:
    url: ${faultyHttp.url}
`,
    });
    t.after(() => server.stop());
    const { client } = await connect(server);
    t.after(() => client.close());
    await waitFor('both', async () => (await client.listTools()).tools.some((x) => x.name === 'local_bad_json') &&
      (await client.listTools()).tools.some((x) => x.name === 'remote_bad_json'));
    // (Had the broken answer been waited out, this would be a TIMEOUT after 30 s.)
    const remote = await client.callTool({ name: 'remote_bad_json', arguments: {} });
    assert.equal(code(remote), 'UPSTREAM_ERROR');
    const local = await client.callTool({ name: 'local_bad_json', arguments: {} });
    assert.equal(code(local), 'TIMEOUT');
    // Both keep serving.
    for (const name of ['local_echo', 'remote_echo']) {
      const r = await client.callTool({ name, arguments: { text: 'ok' } });
      assert.equal(text(r), 'ok');
    }
  });
});
