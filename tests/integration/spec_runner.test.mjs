// `toolport test`: the YAML spec runner against `toolport serve --packs conformance`, over
// stdio, Streamable HTTP and in-process (--config); exit statuses and the final line.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TOOLPORT_BIN, track, serverForTest, withTimeout } from './lib/harness.mjs';

const SPECS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../specs');
const CONFORMANCE = path.join(SPECS, 'conformance');
const JSON_SPEC = path.join(CONFORMANCE, 'unknown_tool.json');
const CONFORMANCE_SPEC_COUNT = 7;

// A single-quoted word for --stdio (which splits like a shell, but runs no shell).
const quote = (word) => `'${word.replaceAll("'", `'\\''`)}'`;
const STDIO_SERVER = `${quote(TOOLPORT_BIN)} serve --stdio --packs conformance --log-level warn`;

// Runs `toolport test ...`; resolves with its exit status and output.
function toolportTest(args, { cwd = SPECS } = {}) {
  const child = track(spawn(TOOLPORT_BIN, ['test', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] }));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
  });
  return withTimeout(done, 45000, `toolport test ${args.join(' ')}`);
}

const lastLine = (text) => text.trimEnd().split('\n').at(-1);

function assertAllPassed(run, count) {
  assert.equal(run.status, 0, `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`);
  assert.equal(lastLine(run.stdout), `${count} passed, 0 failed`);
  assert.equal((run.stdout.match(/^✓ /gm) ?? []).length, count, run.stdout);
  assert.doesNotMatch(run.stdout, /^✗ /m);
}

describe('toolport test', () => {
  let scratch;
  before(() => {
    scratch = mkdtempSync(path.join(os.tmpdir(), 'toolport-spec-it-'));
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('passes the conformance specs over stdio', async () => {
    const run = await toolportTest(['conformance', JSON_SPEC, '--stdio', STDIO_SERVER]);
    assertAllPassed(run, CONFORMANCE_SPEC_COUNT);
    assert.match(run.stdout, /^✓ test_simple_text answers with text \(\d+ ms\)$/m);
    assert.match(run.stdout, /^✓ test_error_handling reports its error \(\d+ ms\)$/m);
    assert.match(run.stdout, /^✓ an unknown tool is a JSON-RPC error \(\d+ ms\)$/m);
    // The committed snapshot was compared, not written again.
    assert.doesNotMatch(run.stdout, /wrote snapshot/);
  });

  it('passes the conformance specs over Streamable HTTP', async (t) => {
    const server = await serverForTest(t);
    const run = await toolportTest(['conformance', JSON_SPEC, '--url', server.url]);
    assertAllPassed(run, CONFORMANCE_SPEC_COUNT);
  });

  it('passes the conformance specs in-process with --config', async () => {
    const config = path.join(scratch, 'toolport.yaml');
    writeFileSync(config, 'packs: [conformance]\n');
    const run = await toolportTest([CONFORMANCE, '--config', config], { cwd: scratch });
    assertAllPassed(run, CONFORMANCE_SPEC_COUNT - 1);
  });

  it("uses a suite's setup.serverUrl when the command line names no server", async (t) => {
    const server = await serverForTest(t);
    const dir = path.join(scratch, 'suite');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      path.join(dir, 'suite.yaml'),
      `name: over HTTP\nsetup:\n  serverUrl: ${server.url}\ntests:\n` +
        '  - name: inline simple text\n    tool: test_simple_text\n    arguments: {}\n' +
        '    assertions: [{type: contains_text, text: simple text}]\n',
    );
    const run = await toolportTest([dir], { cwd: scratch });
    assertAllPassed(run, 1);
  });

  it('fails with status 1 and the final line when specs fail', async () => {
    const run = await toolportTest(['failing', '--stdio', STDIO_SERVER]);
    assert.equal(run.status, 1, run.stdout + run.stderr);
    assert.equal(lastLine(run.stdout), '1 passed, 2 failed');
    assert.match(run.stdout, /^✓ test_simple_text succeeds \(\d+ ms\)$/m);
    assert.match(run.stdout, /^✗ test_simple_text does not say goodbye \(\d+ ms\)\n {4}contains_text: the response does not contain "goodbye"/m);
    // The spec with an unknown key fails alone, naming file, line and key.
    assert.match(run.stdout, /^✗ misspelt assertion key\n {4}failing\/bad_key\.yaml:7: assertions\[0\]\.messageContain: unknown key/m);
  });

  it('reports skipped specs and runs only the `only` ones', async () => {
    const dir = path.join(scratch, 'focus');
    mkdirSync(dir, { recursive: true });
    const spec = (name, extra = '') =>
      `name: ${name}\ntool: test_simple_text\narguments: {}\nassertions: [{type: success}]\n${extra}`;
    writeFileSync(path.join(dir, 'a.yaml'), spec('plain'));
    writeFileSync(path.join(dir, 'b.yaml'), spec('skipped', 'skip: true\n'));
    let run = await toolportTest([dir, '--stdio', STDIO_SERVER]);
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /^- skipped \(skipped\)$/m);
    assert.match(run.stdout, /^1 skipped$/m);
    assert.equal(lastLine(run.stdout), '1 passed, 0 failed');

    writeFileSync(path.join(dir, 'c.yaml'), spec('focused', 'only: true\n'));
    run = await toolportTest([dir, '--stdio', STDIO_SERVER]);
    assert.equal(lastLine(run.stdout), '1 passed, 0 failed');
    assert.match(run.stdout, /^✓ focused/m);
    assert.doesNotMatch(run.stdout, /plain/);
  });

  it('writes, compares and updates snapshots', async () => {
    const dir = path.join(scratch, 'snap');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      path.join(dir, 'snap.yaml'),
      'name: snapshot of a resource\ntype: resource\nuri: test://static-text\n' +
        'assertions: [{type: snapshot, file: resource.json, ignoreFields: [mimeType]}]\n',
    );
    const snapshot = path.join(dir, '__snapshots__', 'resource.json');

    let run = await toolportTest([dir, '--stdio', STDIO_SERVER]);
    assert.equal(run.status, 0, run.stdout);
    assert.match(run.stdout, /^ {4}wrote snapshot __snapshots__\/resource\.json$/m);
    const written = JSON.parse(readFileSync(snapshot, 'utf8'));
    assert.equal(written.contents[0].uri, 'test://static-text');
    assert.equal(written.contents[0].mimeType, undefined); // ignored fields are not stored

    run = await toolportTest([dir, '--stdio', STDIO_SERVER]);
    assert.equal(run.status, 0, run.stdout);
    assert.doesNotMatch(run.stdout, /snapshot __snapshots__/);

    written.contents[0].text = 'something else';
    writeFileSync(snapshot, JSON.stringify(written));
    run = await toolportTest([dir, '--stdio', STDIO_SERVER]);
    assert.equal(run.status, 1);
    assert.match(run.stdout, /snapshot: the response differs from snapshot __snapshots__\/resource\.json/);
    assert.match(run.stdout, /at \/contents\/0\/text: snapshot has "something else", response has "This is the content/);

    run = await toolportTest([dir, '--update-snapshots', '--stdio', STDIO_SERVER]);
    assert.equal(run.status, 0, run.stdout);
    assert.match(run.stdout, /updated snapshot __snapshots__\/resource\.json/);
    assert.equal(JSON.parse(readFileSync(snapshot, 'utf8')).contents[0].text, 'This is the content of the static text resource.');
  });

  it('prints one JSON document with --json', async () => {
    const run = await toolportTest(['failing', '--json', '--stdio', STDIO_SERVER]);
    assert.equal(run.status, 1);
    const report = JSON.parse(run.stdout);
    assert.equal(report.passed, 1);
    assert.equal(report.failed, 2);
    assert.deepEqual(report.results.map((r) => r.status).sort(), ['failed', 'failed', 'passed']);
  });

  it('fails when no specs are found, and on usage errors', async () => {
    const empty = path.join(scratch, 'empty');
    mkdirSync(empty, { recursive: true });
    let run = await toolportTest([empty, '--stdio', STDIO_SERVER]);
    assert.equal(run.status, 1);
    assert.match(run.stderr, /no specs found/);
    assert.equal(lastLine(run.stdout), '0 passed, 0 failed');

    run = await toolportTest(['conformance']);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /give one of --url, --stdio or --config/);

    run = await toolportTest(['conformance', '--url', 'http://127.0.0.1:1/mcp', '--stdio', 'x']);
    assert.equal(run.status, 2);

    run = await toolportTest(['conformance', '--stdio', 'server | tee log']);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /--stdio: unquoted '\|'/);
  });

  it('fails every spec clearly when the server cannot be reached', async () => {
    const run = await toolportTest(['conformance/simple_text.yaml', 'conformance/error_handling.yaml', '--url', 'http://127.0.0.1:1/mcp']);
    assert.equal(run.status, 1);
    assert.equal(lastLine(run.stdout), '0 passed, 2 failed');
    assert.equal((run.stdout.match(/cannot reach the server: /g) ?? []).length, 2, run.stdout);
  });
});
