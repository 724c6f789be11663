// `toolport list / call / reload` as a new user meets them (issue 29, finding 11): the list
// shows each tool's parameters, a structured result is printed once, a --stdio server's log
// stays out of the answer (unless --verbose or the server fails), progress is shown, a Claude
// Desktop server list is read with --import (and --config points there), and reload needs
// --url like list and says what changed.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOOLPORT_BIN, startHttpServer, runToolport } from './lib/harness.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const FIXTURES = path.resolve(HERE, '../fixtures/openapi');

// The CLI without a bearer token from the environment; {code, stdout, stderr}.
async function runCli(args, { env = {}, timeoutMs = 30000 } = {}) {
  const run = await runToolport(args, { env: { TOOLPORT_TOKEN: '', ...env }, timeoutMs });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

const quote = (text) => `'${text.replaceAll("'", "'\\''")}'`;
const STDIO_SERVER = `${quote(TOOLPORT_BIN)} serve --stdio --packs conformance`;

let dir;
before(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-cli-first-'));
  writeFileSync(path.join(dir, 'context.yaml'), `packs:\n  context:\n    patterns_root: ${path.join(ROOT, 'examples/patterns')}\n`);
  writeFileSync(
    path.join(dir, 'mcpServers.json'),
    JSON.stringify({ mcpServers: { conformance: { command: TOOLPORT_BIN, args: ['serve', '--stdio', '--packs', 'conformance'] } } }),
  );
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('toolport list', () => {
  it('shows each tool with its parameters, the optional ones marked', async () => {
    const res = await runCli(['list', '--stdio', STDIO_SERVER]);
    assert.equal(res.code, 0, res.stderr);
    const lines = res.stdout.split('\n');
    assert.ok(lines.some((l) => /^confirm_delete\(filename\)\s+Asks the user/.test(l)), res.stdout);
    assert.ok(lines.some((l) => /^greet\(name\?\)\s+Greets/.test(l)), res.stdout);
    assert.ok(lines.some((l) => /^test_simple_text\s+Tests simple text/.test(l)), res.stdout);
  });
});

describe('toolport call', () => {
  it('prints a structured result once (not its text copy and then the structure again)', async () => {
    const res = await runCli(['call', '--config', path.join(dir, 'context.yaml'), 'searchPatterns', '{"keyword": "retry"}']);
    assert.equal(res.code, 0, res.stderr);
    const printed = JSON.parse(res.stdout); // one JSON document, pretty-printed
    assert.equal(printed.success, true);
    assert.ok(printed.data.some((p) => p.id === 'backend/retry-with-backoff'));
  });

  it("--stdio keeps the server's log out of the terminal unless --verbose", async () => {
    const quiet = await runCli(['call', '--stdio', STDIO_SERVER, 'test_simple_text']);
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.equal(quiet.stderr, '', 'nothing but the answer');
    const verbose = await runCli(['call', '--stdio', STDIO_SERVER, 'test_simple_text', '--verbose']);
    assert.equal(verbose.code, 0, verbose.stderr);
    assert.match(verbose.stderr, /serving MCP on stdio/);
  });

  it("--stdio shows the server's log when the server fails", async () => {
    const res = await runCli(['call', '--stdio', `${quote(TOOLPORT_BIN)} serve --stdio --packs no_such_pack`, 'x']);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /toolport call: the server process ".*" exited with status 2/);
    assert.match(res.stderr, /no_such_pack/, "the server's own reason");
  });

  it('shows the progress the server reports, on stderr', async () => {
    const res = await runCli(['call', '--stdio', STDIO_SERVER, 'test_tool_with_progress']);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stderr, /^progress 50(\.0)?\/100(\.0)?: Completed step 50 of 100$/m);
    assert.doesNotMatch(res.stdout, /progress/);
  });
});

describe('list / call with an MCP client server list', () => {
  it('--config of an mcpServers file says to use --import', async () => {
    const file = path.join(dir, 'mcpServers.json');
    for (const command of [['list'], ['call', 'test_simple_text']]) {
      const res = await runCli([...command, '--config', file]);
      assert.equal(res.code, 2, res.stderr);
      assert.match(res.stderr, new RegExp(`use --import ${file.replaceAll('.', '\\.')}`));
    }
  });

  it('--import serves its servers through a gateway in this process', async () => {
    const file = path.join(dir, 'mcpServers.json');
    const list = await runCli(['list', '--import', file]);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^test_simple_text\s/m);
    const call = await runCli(['call', '--import', file, 'test_simple_text']);
    assert.equal(call.code, 0, call.stderr);
    assert.equal(call.stdout, 'This is a simple text response for testing.\n');
  });
});

describe('toolport reload', () => {
  it('needs --url, as list does', async () => {
    const res = await runCli(['reload']);
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /--url is required/);
  });

  it('reports the tools the reload added, removed and changed', async (t) => {
    const document = path.join(dir, 'inventory.yaml');
    copyFileSync(path.join(FIXTURES, 'inventory.yaml'), document);
    copyFileSync(path.join(FIXTURES, 'common.yaml'), path.join(dir, 'common.yaml'));
    const env = { INVENTORY_API_KEY: 'k', INVENTORY_BEARER: 't' };
    const server = await startHttpServer({
      packs: '',
      config: `reload:\n  min_interval_s: 0\nopenapi:\n  inventory:\n    document: ${document}\n    base_url: http://127.0.0.1:9/v1\n`,
      env,
    });
    t.after(() => server.stop());
    const same = await runCli(['reload', '--url', server.url], { env });
    assert.equal(same.code, 0, same.stderr);
    assert.deepEqual(JSON.parse(same.stdout), { reloading: ['inventory'], started: true });
    assert.match(same.stderr, /toolport reload: done: read again: inventory; no tool changed/);

    writeFileSync(document, readFileSync(document, 'utf8').replace('operationId: explode', 'operationId: blowUp'));
    const renamed = await runCli(['reload', '--url', server.url], { env });
    assert.equal(renamed.code, 0, renamed.stderr);
    assert.match(renamed.stderr, /toolport reload: done: read again: inventory; tools: 1 added \(blowUp\), 1 removed \(explode\), none changed/);

    writeFileSync(document, readFileSync(document, 'utf8').replace('summary: One item\n', 'summary: One item, by id\n'));
    const described = await runCli(['reload', '--url', server.url], { env });
    assert.equal(described.code, 0, described.stderr);
    assert.match(described.stderr, /tools: none added, none removed, 1 changed \(getItem\)/);
  });
});
