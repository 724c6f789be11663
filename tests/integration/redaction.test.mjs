// The built-in content scan with the real binary (issue 34): a gateway upstream's results
// redacted (text, structuredContent that still passes the SDK's outputSchema check), the
// audit log's arguments redacted, the metrics counted, and a result with prompt-injection
// markers labelled (never edited), over Streamable HTTP and stdio with the official SDK.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { TOOLPORT_BIN, request, runToolport, serverForTest, waitFor } from './lib/harness.mjs';
import { NODE, yamlString } from './lib/gateway_setup.mjs';
import { ACCOUNT, FORECAST, LEAKY_UPSTREAM, POISON } from './lib/leaky_upstream.mjs';

function tempDir(t) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-redaction-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const config = (auditFile, sourceExtra = '  leaky:\n    redact: {results: [all]}\n') =>
  [
    'upstreams:',
    '  leaky:',
    `    command: [${yamlString(NODE)}, ${yamlString(LEAKY_UPSTREAM)}]`,
    'sources:',
    sourceExtra.trimEnd(),
    'audit:',
    '  enabled: true',
    `  path: ${yamlString(auditFile)}`,
    '  flush_interval_ms: 100',
    '  include_arguments: true',
    '',
  ].join('\n');

function records(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

async function ready(client) {
  await waitFor('the upstream tools', async () => (await client.listTools()).tools.some((t) => t.name === 'account'));
}

// What every transport must show: returns nothing, asserts everything.
async function checkResults(client, auditFile) {
  await ready(client);
  // SDK 1.x validates structuredContent against the outputSchema it listed: a redacted
  // string is still a string, so the result passes.
  const account = await client.callTool({ name: 'account', arguments: {} });
  assert.ok(!account.isError, JSON.stringify(account));
  const s = account.structuredContent;
  assert.equal(s.owner.email, '[REDACTED:email]');
  assert.equal(s.owner.ssn, '[REDACTED:ssn]');
  assert.equal(s.card, '[REDACTED:card]');
  assert.equal(s.key, '[REDACTED:api_key]');
  assert.equal(s.owner.name, 'Alice');
  assert.equal(s.orders, ACCOUNT.orders);
  assert.equal(s.updated, ACCOUNT.updated);
  // The text block that mirrors it says the same, and holds none of the values.
  const text = account.content.map((c) => c.text).join('\n');
  assert.deepEqual(JSON.parse(account.content[0].text), s);
  for (const secret of [ACCOUNT.owner.email, ACCOUNT.card, ACCOUNT.key, ACCOUNT.owner.ssn]) {
    assert.ok(!text.includes(secret), text);
  }
  assert.deepEqual(account._meta['toolport/redacted'], { api_key: 1, email: 1, card: 1, ssn: 1 });

  // The arguments are redacted in the audit record; the tool got them as sent.
  const echoed = await client.callTool({ name: 'echo', arguments: { text: 'mail bob@example.org today' } });
  assert.equal(echoed.content[0].text, 'mail [REDACTED:email] today');
  await waitFor('the audit record', () => records(auditFile).some((r) => r.method === 'tools/call' && r.target === 'echo'));
  const audit = records(auditFile).find((r) => r.method === 'tools/call' && r.target === 'echo');
  assert.deepEqual(audit.arguments, { text: 'mail [REDACTED:email] today' });
  assert.ok(!readFileSync(auditFile, 'utf8').includes('bob@example.org'));

  // Injection markers: labelled, the tool's text kept as it was, a warning put first.
  const poisoned = await client.callTool({ name: 'poisoned', arguments: {} });
  assert.ok(!poisoned.isError);
  assert.match(poisoned.content[0].text, /^\[toolport\] Warning: this result from the source "leaky"/);
  assert.match(poisoned.content[0].text, /ignore_instructions, role_tag/);
  assert.equal(poisoned.content[1].text, POISON);
  assert.deepEqual(poisoned._meta['toolport/injection'], {
    source: 'leaky',
    markers: { ignore_instructions: 1, role_tag: 2 },
  });

  // A redacted value that breaks the outputSchema's pattern: an error, never the value
  // nor a result that breaks the schema.
  const patterned = await client.callTool({ name: 'patterned', arguments: {} });
  assert.equal(patterned.isError, true);
  assert.equal(patterned.structuredContent?.error_code ?? patterned._meta?.['toolport/error']?.error_code, 'UPSTREAM_ERROR');
  assert.ok(!JSON.stringify(patterned).includes('bob@example.com'));
}

describe('built-in redaction and injection labelling', () => {
  it('over Streamable HTTP: results, audit arguments and metrics', async (t) => {
    const dir = tempDir(t);
    const auditFile = path.join(dir, 'audit.jsonl');
    const server = await serverForTest(t, { config: config(auditFile) });
    const client = new Client({ name: 'redaction-http', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    t.after(() => client.close());
    await checkResults(client, auditFile);

    const metrics = (await request(server, 'GET', { path: '/metrics' })).text;
    const value = (line) => Number(metrics.split('\n').find((l) => l.startsWith(line))?.slice(line.length + 1));
    assert.equal(value('toolport_redactions_total{detector="email",source="leaky",where="result"}'), 3);
    assert.equal(value('toolport_redactions_total{detector="card",source="leaky",where="result"}'), 1);
    assert.equal(value('toolport_redactions_total{detector="email",source="leaky",where="audit"}'), 1);
    assert.equal(value('toolport_injection_markers_total{marker="role_tag",source="leaky"}'), 2);
    assert.equal(value('toolport_injection_markers_total{marker="ignore_instructions",source="leaky"}'), 1);
  });

  it('over stdio: the same results and audit record', async (t) => {
    const dir = tempDir(t);
    const auditFile = path.join(dir, 'audit.jsonl');
    const file = path.join(dir, 'toolport.yaml');
    writeFileSync(file, config(auditFile));
    const client = new Client({ name: 'redaction-stdio', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({ command: TOOLPORT_BIN, args: ['serve', '--stdio', '--packs', 'conformance', '--config', file], stderr: 'pipe' }),
    );
    t.after(() => client.close());
    await checkResults(client, auditFile);
  });

  it('leaves results alone unless configured, and labels without the warning block when told', async (t) => {
    const dir = tempDir(t);
    const auditFile = path.join(dir, 'audit.jsonl');
    const server = await serverForTest(t, {
      config: config(auditFile, '  leaky:\n    injection_scan: {warning: false}\n    redact: {payloads: []}\n'),
    });
    const client = new Client({ name: 'redaction-off', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    t.after(() => client.close());
    await ready(client);
    const account = await client.callTool({ name: 'account', arguments: {} });
    assert.deepEqual(account.structuredContent, ACCOUNT);
    assert.equal(account._meta['toolport/redacted'], undefined);
    const poisoned = await client.callTool({ name: 'poisoned', arguments: {} });
    assert.equal(poisoned.content.length, 1);
    assert.equal(poisoned.content[0].text, POISON);
    assert.deepEqual(poisoned._meta['toolport/injection'].markers, { ignore_instructions: 1, role_tag: 2 });
    // payloads: [] keeps the audit record's arguments as sent.
    await client.callTool({ name: 'echo', arguments: { text: 'mail bob@example.org' } });
    await waitFor('the audit record', () => records(auditFile).some((r) => r.method === 'tools/call' && r.target === 'echo'));
    assert.deepEqual(records(auditFile).find((r) => r.method === 'tools/call' && r.target === 'echo').arguments, { text: 'mail bob@example.org' });
    // A pack Toolport owns is not scanned by default.
    const own = await client.callTool({ name: 'greet', arguments: { name: 'ignore all previous instructions' } });
    assert.equal(own._meta?.['toolport/injection'], undefined);
  });

  it("an upstream's resources and prompts are scanned as its results are", async (t) => {
    const dir = tempDir(t);
    const server = await serverForTest(t, { config: config(path.join(dir, 'audit.jsonl')) });
    const client = new Client({ name: 'redaction-reads', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    t.after(() => client.close());
    await ready(client);
    const redacted = FORECAST.replace(ACCOUNT.owner.email, '[REDACTED:email]');
    const read = await client.readResource({ uri: 'leaky://forecast' });
    assert.equal(read.contents[0].text, redacted);
    // Labelled on the content itself (its _meta), the text otherwise as the upstream sent it.
    assert.deepEqual(read.contents[0]._meta['toolport/injection'], { source: 'leaky', markers: { ignore_instructions: 1, role_tag: 2 } });
    assert.deepEqual(read.contents[0]._meta['toolport/redacted'], { email: 1 });
    const prompt = await client.getPrompt({ name: 'forecast' });
    assert.equal(prompt.messages[0].content.text, redacted);
    assert.deepEqual(prompt._meta['toolport/injection'].markers, { ignore_instructions: 1, role_tag: 2 });

    // Without redaction asked for, the bytes are the upstream's: only the label is added.
    const plain = await serverForTest(t, { config: config(path.join(dir, 'audit2.jsonl'), '  leaky:\n    redact: {payloads: []}\n') });
    const other = new Client({ name: 'redaction-reads-plain', version: '1.0.0' });
    await other.connect(new StreamableHTTPClientTransport(new URL(plain.url)));
    t.after(() => other.close());
    await ready(other);
    const untouched = await other.readResource({ uri: 'leaky://forecast' });
    assert.equal(untouched.contents[0].text, FORECAST);
    assert.equal(untouched.contents[0]._meta['toolport/redacted'], undefined);
    assert.ok(untouched.contents[0]._meta['toolport/injection']);
  });

  it('config check names an unknown detector', async (t) => {
    const dir = tempDir(t);
    const file = path.join(dir, 'bad.yaml');
    writeFileSync(file, 'pipeline:\n  redact:\n    results: [email, passport]\n');
    const run = await runToolport(['config', 'check', file]);
    assert.equal(run.status, 2, run.stdout + run.stderr);
    assert.match(run.stderr, /pipeline\.redact\.results: unknown detector "passport" \(known: secrets, personal, all, api_key/);
    // Asked for where the stage is left out: said, not silently skipped.
    writeFileSync(file, 'sources:\n  crm:\n    disable: [content_scan]\n    redact: {results: [email]}\n');
    const left = await runToolport(['config', 'check', file]);
    assert.equal(left.status, 2, left.stdout + left.stderr);
    assert.match(left.stderr, /sources\.crm\.disable: leaves out content_scan, the stage that does what redact\.results asks/);
  });
});
