// The configuration's reference files are generated from the one table of keys
// (src/app/config_table.hpp) and kept in the repository: schema/toolport.schema.json
// (`toolport config schema`, for editors: the YAML language server's `$schema=` line) and
// docs/configuration.md (`toolport config docs`). They must be what the binary prints, so
// they cannot drift from the keys the code reads; and every ready configuration in
// examples/ validates against the schema (as an editor would check it).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv from 'ajv';
import YAML from 'yaml';
import { runToolport } from './lib/harness.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SCHEMA = path.join(ROOT, 'schema/toolport.schema.json');
const DOCS = path.join(ROOT, 'docs/configuration.md');
const EXAMPLES = path.join(ROOT, 'examples');

// Without the environment that changes what the binary knows (the testing pack).
const ENV = { TOOLPORT_TEST_PACK: '' };

describe('configuration reference', () => {
  it('schema/toolport.schema.json is what `toolport config schema` prints', async () => {
    const res = await runToolport(['config', 'schema'], { env: ENV });
    assert.equal(res.status, 0, res.stderr);
    assert.ok(
      readFileSync(SCHEMA, 'utf8') === res.stdout,
      'schema/toolport.schema.json differs from the declarations; regenerate it with: ' +
        'build/toolport config schema > schema/toolport.schema.json',
    );
  });

  it('docs/configuration.md is what `toolport config docs` prints', async () => {
    const res = await runToolport(['config', 'docs'], { env: ENV });
    assert.equal(res.status, 0, res.stderr);
    assert.ok(
      readFileSync(DOCS, 'utf8') === res.stdout,
      'docs/configuration.md differs from the declarations; regenerate it with: ' +
        'build/toolport config docs > docs/configuration.md',
    );
  });

  it('the schema is a valid draft-07 schema', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    assert.ok(ajv.validateSchema(JSON.parse(readFileSync(SCHEMA, 'utf8'))), JSON.stringify(ajv.errors));
  });

  const schema = JSON.parse(readFileSync(SCHEMA, 'utf8'));
  const validate = new Ajv({ strict: false, allErrors: true }).compile(schema);
  for (const name of readdirSync(EXAMPLES).filter((n) => n.endsWith('.yaml')).sort()) {
    it(`examples/${name} names the schema and validates against it`, () => {
      const text = readFileSync(path.join(EXAMPLES, name), 'utf8');
      assert.ok(text.startsWith('# yaml-language-server: $schema=../schema/toolport.schema.json\n'), name);
      const ok = validate(YAML.parse(text));
      assert.ok(ok, JSON.stringify(validate.errors, null, 2));
    });
  }

  it('the schema refuses what the reader refuses: an unknown key, a value out of range', () => {
    assert.equal(validate(YAML.parse('http:\n  listne: ":8080"\n')), false);
    assert.equal(validate(YAML.parse('server:\n  page_size: 10001\n')), false);
    assert.equal(validate(YAML.parse('log:\n  level: loud\n')), false);
    assert.equal(validate(YAML.parse('auth:\n  issuer: https://as.example\n  introspection:\n    client_secret_env: X\n')), true);
  });
});

describe('toolport config show', () => {
  it('prints every key as it takes effect, from the file, the environment or its default, secrets as ***', async (t) => {
    const { mkdtempSync, rmSync, writeFileSync } = await import('node:fs');
    const os = await import('node:os');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-show-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'toolport.yaml');
    writeFileSync(file, [
      'http:',
      '  max_body_bytes: 2048',
      'upstreams:',
      '  remote:',
      '    url: http://user:hunter2@127.0.0.1:9/mcp',
      '    headers: {Authorization: Bearer abc-secret-123}',
      'auth:',
      '  issuer: https://as.example',
      '  introspection:',
      '    client_secret: inline-secret-456',
      '',
    ].join('\n'));
    const env = { ...ENV, MAX_DOWNSTREAM_CALLS_PER_REQUEST: '9' };
    const res = await runToolport(['config', 'show', '--json', file], { env });
    assert.equal(res.status, 0, res.stderr);
    for (const secret of ['hunter2', 'abc-secret-123', 'inline-secret-456']) assert.ok(!res.stdout.includes(secret), secret);
    const rows = JSON.parse(res.stdout);
    const row = (p) => rows.find((r) => r.path === p);
    assert.deepEqual(row('http.max_body_bytes'), { path: 'http.max_body_bytes', value: 2048, from: 'file' });
    assert.deepEqual(row('http.max_sessions'), { path: 'http.max_sessions', value: 100000, from: 'default' });
    assert.deepEqual(row('pipeline.budget.max_downstream_calls_per_request'),
      { path: 'pipeline.budget.max_downstream_calls_per_request', value: 9, from: 'env MAX_DOWNSTREAM_CALLS_PER_REQUEST' });
    assert.equal(row('upstreams.remote.url').value, 'http://***@127.0.0.1:9/mcp');
    assert.deepEqual(row('upstreams.remote.headers').value, { Authorization: '***' });
    assert.deepEqual(row('auth.introspection.client_secret'), { path: 'auth.introspection.client_secret', value: '***', from: 'file' });
    assert.equal(row('upstreams.remote.command'), undefined, 'a key without a value or default is not listed');
    // The text form: one aligned line a key.
    const text = await runToolport(['config', 'show', file], { env });
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /^http\.max_body_bytes +2048 {2}\(file\)$/m);
    assert.match(text.stdout, /^pipeline\.budget\.max_downstream_calls_per_request +9 {2}\(env MAX_DOWNSTREAM_CALLS_PER_REQUEST\)$/m);
    // A file serve would refuse: the same error, exit 2.
    writeFileSync(file, 'http:\n  max_sesions: 5\n');
    const bad = await runToolport(['config', 'show', file], { env });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /max_sesions/);
  });
});
