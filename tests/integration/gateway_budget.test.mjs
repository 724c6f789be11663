// The gateway's budget follows seed 002 (issue 29, defect 6): an upstream result without
// _meta.downstream_api_calls counts as the configured default (12), not 1; the scope is one
// user request as the host marks it (traceparent, or _meta "toolport/request"), else the
// session, whose tally starts again after budget.session_idle_s without calls; the refusal
// names the scope it used; `toolport config check` shows each upstream's real figure.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpServer, runToolport, sleep } from './lib/harness.mjs';
import { NODE, EVERYTHING, yamlString, code, text } from './lib/gateway_setup.mjs';

const config = (extra = '') => `
upstreams:
  everything:
    command: ${yamlString(NODE)}
    args: [${yamlString(EVERYTHING)}, stdio]
${extra}pipeline:
  cache: {enabled: false}
  budget: {session_idle_s: 2}
`;

describe('gateway budget (seed 002)', () => {
  let server;
  before(async () => {
    server = await startHttpServer({ packs: '', config: config() });
  });
  after(async () => server?.stop());

  async function connect() {
    const client = new Client({ name: 'budget-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    await client.listTools();
    return client;
  }
  const echo = (client, meta) => client.callTool({ name: 'echo', arguments: { message: 'hi' }, ...(meta ? { _meta: meta } : {}) });

  it('counts a result that reports nothing as the default 12, and refuses the 11th call of a session, naming the session', async () => {
    const client = await connect();
    try {
      const first = await echo(client);
      assert.equal(code(first), 'OK', text(first));
      assert.equal(first._meta.downstream_api_calls, 12, JSON.stringify(first._meta));
      for (let i = 2; i <= 10; i++) assert.equal(code(await echo(client)), 'OK', `call ${i}`);
      const refused = await echo(client);
      assert.equal(code(refused), 'MCP_BUDGET_EXCEEDED', text(refused));
      assert.match(text(refused), /120 of 120 downstream calls already used in this session/);
      assert.doesNotMatch(text(refused), /this request/);
      assert.match(text(refused), /toolport\/request/, 'the refusal says how a host marks its user requests');
      // A pause between the user's turns ends the session's "request".
      await sleep(2500);
      assert.equal(code(await echo(client)), 'OK', 'a fresh tally after session_idle_s without calls');
    } finally {
      await client.close();
    }
  });

  it('gives each user request a host marks with _meta "toolport/request" (or traceparent) its own budget', async () => {
    const client = await connect();
    try {
      for (let i = 1; i <= 10; i++) assert.equal(code(await echo(client, { 'toolport/request': 'turn-1' })), 'OK', `call ${i}`);
      const refused = await echo(client, { 'toolport/request': 'turn-1' });
      assert.equal(code(refused), 'MCP_BUDGET_EXCEEDED');
      assert.match(text(refused), /in this user request \(its _meta "toolport\/request" id\)/);
      assert.equal(code(await echo(client, { 'toolport/request': 'turn-2' })), 'OK', 'the next user request has its own');
      const trace = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
      for (let i = 1; i <= 10; i++) assert.equal(code(await echo(client, trace)), 'OK');
      const byTrace = await echo(client, trace);
      assert.match(text(byTrace), /in this user request \(its traceparent trace id\)/);
    } finally {
      await client.close();
    }
  });

  it('`toolport config check` shows each upstream\'s figure per call', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-budget-'));
    try {
      const file = path.join(dir, 'gateway.yaml');
      writeFileSync(file, `upstreams:
  everything:
    command: ${yamlString(NODE)}
    args: [${yamlString(EVERYTHING)}, stdio]
  cheap:
    command: ${yamlString(NODE)}
    args: [${yamlString(EVERYTHING)}, stdio]
    downstream_calls_estimate: 1
  tuned:
    command: ${yamlString(NODE)}
    args: [${yamlString(EVERYTHING)}, stdio]
sources:
  tuned: {budget: {default_downstream_per_call: 3}}
`);
      const run = await runToolport(['config', 'check', file]);
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stdout, /upstream everything: budget 12 per call without _meta \(pipeline default\)/);
      assert.match(run.stdout, /upstream cheap: budget 1 per call without _meta \(downstream_calls_estimate\)/);
      assert.match(run.stdout, /upstream tuned: budget 3 per call without _meta \(sources\.tuned\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
