// Every error path of every context tool, as the SDK 1.x client (what most hosts embed) meets
// it: the client lists the tools first and then checks every structuredContent against the
// tool's outputSchema, throwing -32602 on a mismatch so that the agent never sees the error.
// Each result here is also checked with Ajv against the tool's own outputSchema, and each
// error's text must name its machine-readable code and carry a suggestion (issue 29, defect 1).
// The same server answers the project-addressing cases of defect 9: one `project` argument (a
// name under the projects root, or an absolute path inside it), listProjects, skills by bare
// name, and a library or projects root that is missing.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv from 'ajv';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { runToolport, startHttpServer } from './lib/harness.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');

// A copy of examples/ (plus a second "retry-with-backoff" in testing/, so that bare name is
// ambiguous) and a config serving it.
function world({ patterns = true, projects = true } = {}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-ctx-errors-'));
  cpSync(path.join(ROOT, 'examples'), dir, { recursive: true });
  writeFileSync(path.join(dir, 'patterns/testing/retry-with-backoff.md'), '# Retry in tests\n\nRetries a flaky step.\n');
  mkdirSync(path.join(dir, 'outside'));
  const config = [
    'packs:',
    '  context:',
    `    patterns_root: ${patterns ? `${dir}/patterns` : `${dir}/no-such-library`}`,
    `    projects_root: ${projects ? `${dir}/projects` : `${dir}/no-such-projects`}`,
    `    index_file: ${dir}/cache/index.sqlite`,
    '',
  ].join('\n');
  return { dir, config, project: path.join(dir, 'projects/demo-app') };
}

async function connect(server) {
  const client = new Client({ name: 'toolport-it-context-errors', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  const { tools } = await client.listTools();
  const ajv = new Ajv({ strict: false, allErrors: true });
  const validators = new Map(tools.map((t) => [t.name, t.outputSchema ? ajv.compile(t.outputSchema) : null]));
  return { client, tools, validators };
}

// Calls `name` through the SDK client (which validates too) and checks the result against the
// tool's outputSchema with Ajv; returns the result.
async function call(ctx, name, args) {
  let result;
  try {
    result = await ctx.client.callTool({ name, arguments: args });
  } catch (e) {
    assert.fail(`${name} ${JSON.stringify(args)}: the SDK client threw ${e.code ?? ''} ${e.message}`);
  }
  const validate = ctx.validators.get(name);
  assert.ok(validate, `${name} declares no outputSchema`);
  if (result.structuredContent !== undefined) {
    assert.ok(
      validate(result.structuredContent),
      `${name} ${JSON.stringify(args)}: structuredContent fails its outputSchema: ${JSON.stringify(validate.errors)}\n${JSON.stringify(result.structuredContent)}`,
    );
  } else {
    assert.ok(result.isError, `${name}: a success without structuredContent`);
  }
  return result;
}

const text = (result) => result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

// An error result naming `code` in its structuredContent and its text, with a suggestion.
async function expectError(ctx, name, args, code, messagePattern) {
  const result = await call(ctx, name, args);
  const shown = `${name} ${JSON.stringify(args)} → ${text(result).slice(0, 600)}`;
  assert.equal(result.isError, true, shown);
  assert.ok(text(result).includes(code), `the text lacks the code ${code}: ${shown}`);
  assert.match(text(result), /suggestion/i, `the text lacks a suggestion: ${shown}`);
  if (result.structuredContent) {
    assert.equal(result.structuredContent.success, false, shown);
    assert.equal(result.structuredContent.error.code, code, shown);
    assert.ok(result.structuredContent.error.suggestion, `no suggestion: ${shown}`);
  }
  if (messagePattern) assert.match(text(result), messagePattern, shown);
  // No server-side home or absolute path reaches a client in an error.
  assert.ok(!text(result).includes(os.homedir()), `a home path in: ${shown}`);
  assert.ok(!text(result).includes(ctx.dir), `a server path in: ${shown}`);
  return result;
}

async function expectSuccess(ctx, name, args) {
  const result = await call(ctx, name, args);
  assert.ok(!result.isError, `${name} ${JSON.stringify(args)} failed: ${text(result).slice(0, 600)}`);
  assert.equal(result.structuredContent.success, true);
  return result.structuredContent;
}

describe('context tools with the SDK 1.x client', () => {
  let w;
  let server;
  let ctx;

  before(async () => {
    w = world();
    server = await startHttpServer({ config: w.config, packs: 'context' });
    ctx = { ...(await connect(server)), dir: w.dir };
  });
  after(async () => {
    await ctx?.client.close();
    await server?.stop();
    if (w) rmSync(w.dir, { recursive: true, force: true });
  });

  it('answers every error path of every tool with a result that matches its outputSchema, its code and a suggestion', async () => {
    const outside = path.join(w.dir, 'outside');
    const quality = { correctness: 9, reusability: 9, documentation: 9, testCoverage: 9, performance: 9 };
    const cases = [
      // searchPatterns
      ['searchPatterns', { category: 'cooking' }, 'CATEGORY_INVALID'],
      ['searchPatterns', { limit: 0 }, 'VALIDATION_ERROR'],
      ['searchPatterns', { keyword: 42 }, 'VALIDATION_ERROR'],
      // loadSkill
      ['loadSkill', {}, 'VALIDATION_ERROR'],
      ['loadSkill', { skillId: '../../etc/passwd' }, 'VALIDATION_ERROR'],
      ['loadSkill', { skillId: 'database/no-such-pattern' }, 'PATTERN_NOT_FOUND'],
      ['loadSkill', { skillId: 'cooking/pasta' }, 'CATEGORY_INVALID'],
      ['loadSkill', { skillId: 'no-such-pattern' }, 'PATTERN_NOT_FOUND'],
      ['loadSkill', { skillId: 'retry-with-backoff' }, 'VALIDATION_ERROR', /backend\/retry-with-backoff.*testing\/retry-with-backoff/],
      ['loadSkill', { skillId: 'x'.repeat(400) }, 'VALIDATION_ERROR'],
      // executeSkill
      ['executeSkill', { skillId: 'database/rls-policy-generator' }, 'VALIDATION_ERROR'],
      ['executeSkill', { skillId: 'database/no-such-pattern', input: {} }, 'PATTERN_NOT_FOUND'],
      ['executeSkill', { skillId: 'database/keyset-pagination', input: {} }, 'SKILL_NOT_FOUND'],
      ['executeSkill', { skillId: 'database/rls-policy-generator', input: { table: 'sessions; DROP TABLE users' }, dryRun: true }, 'VALIDATION_ERROR'],
      ['executeSkill', { skillId: 'retry-with-backoff', input: {} }, 'VALIDATION_ERROR', /backend\/retry-with-backoff/],
      ['executeSkill', { skillId: 'a/b/c', input: {} }, 'VALIDATION_ERROR'],
      // extractPattern
      ['extractPattern', { name: 'x', category: 'backend', description: 'd', documentation: '# d' }, 'VALIDATION_ERROR'],
      ['extractPattern', { name: 'Not Kebab', category: 'backend', description: 'd', documentation: '# d', quality }, 'VALIDATION_ERROR'],
      ['extractPattern', { name: 'x', category: 'cooking', description: 'd', documentation: '# d', quality }, 'CATEGORY_INVALID'],
      ['extractPattern', { name: 'retry-with-backoff', category: 'backend', description: 'd', documentation: '# d', quality }, 'VALIDATION_ERROR', /already exists/],
      ['extractPattern', { name: 'half-baked', category: 'backend', description: 'd', documentation: '# d', quality: { ...quality, correctness: 1, reusability: 1 } }, 'VALIDATION_ERROR', /threshold/],
      ['extractPattern', { name: 'with-code', category: 'backend', description: 'd', documentation: '# d', quality, code: 'x()' }, 'VALIDATION_ERROR', /language/],
      // searchArtifacts
      ['searchArtifacts', { project: 'no-such-project' }, 'VALIDATION_ERROR', /demo-app/],
      ['searchArtifacts', { project: '../outside' }, 'VALIDATION_ERROR'],
      ['searchArtifacts', { limit: 1000 }, 'VALIDATION_ERROR'],
      // loadSession
      ['loadSession', { project: 'demo-app' }, 'VALIDATION_ERROR'],
      ['loadSession', { project: 'demo-app', sessionId: '2099-01-01-nothing' }, 'SESSION_NOT_FOUND'],
      ['loadSession', { project: 'no-such-project', sessionId: '2025-10-15-authentication-flow' }, 'VALIDATION_ERROR', /demo-app/],
      ['loadSession', { project: 'demo-app', sessionId: '../../etc' }, 'VALIDATION_ERROR'],
      ['loadSession', { project: outside, sessionId: '2025-10-15-authentication-flow' }, 'VALIDATION_ERROR', /projects root/],
      // getSessionCode
      ['getSessionCode', { project: 'demo-app', sessionId: '2099-01-01-nothing' }, 'SESSION_NOT_FOUND'],
      ['getSessionCode', { project: '/etc', sessionId: 'x' }, 'VALIDATION_ERROR'],
      ['getSessionCode', { sessionId: '2025-10-15-authentication-flow' }, 'VALIDATION_ERROR', /demo-app/],
      // saveSession
      ['saveSession', { project: 'demo-app', sessionId: '2025-10-15-authentication-flow', title: 't', summary: 's' }, 'VALIDATION_ERROR', /already exists/],
      ['saveSession', { project: 'no-such-project', sessionId: '2025-12-01-x', title: 't', summary: 's' }, 'VALIDATION_ERROR'],
      ['saveSession', { project: 'demo-app', projectPath: outside, sessionId: '2025-12-01-x', title: 't', summary: 's' }, 'VALIDATION_ERROR'],
      ['saveSession', { project: 'demo-app', sessionId: '2025-12-01-x', title: 't', summary: 's', originalTokens: 10 }, 'VALIDATION_ERROR'],
      ['saveSession', { project: 'demo-app', sessionId: '2025-12-01-x', title: '', summary: 's' }, 'VALIDATION_ERROR'],
      // addNote
      ['addNote', { project: 'demo-app', type: 'rumour', content: 'x' }, 'VALIDATION_ERROR'],
      ['addNote', { project: 'demo-app', type: 'decision', content: '' }, 'VALIDATION_ERROR'],
      ['addNote', { type: 'decision', content: 'x' }, 'VALIDATION_ERROR', /demo-app/],
      ['addNote', { project: outside, type: 'decision', content: 'x' }, 'VALIDATION_ERROR', /projects root/],
      ['addNote', { project: `${w.project}/../../outside`, type: 'decision', content: 'x' }, 'VALIDATION_ERROR'],
      ['addNote', { project: 'relative/path', type: 'decision', content: 'x' }, 'VALIDATION_ERROR'],
      ['addNote', { project: 'no-such-project', type: 'decision', content: 'x' }, 'VALIDATION_ERROR', /demo-app/],
      // getDecisions, getHypotheses, getBlockers
      ...['getDecisions', 'getHypotheses', 'getBlockers'].flatMap((tool) => [
        [tool, { project: 'demo-app', cursor: 'not-a-cursor' }, 'VALIDATION_ERROR'],
        [tool, { project: 'demo-app', since: 'last tuesday' }, 'VALIDATION_ERROR'],
        [tool, { project: 'demo-app', limit: 0 }, 'VALIDATION_ERROR'],
        [tool, {}, 'VALIDATION_ERROR', /demo-app/],
        [tool, { project: '/' }, 'VALIDATION_ERROR'],
      ]),
      // getCompressionRatio
      ['getCompressionRatio', { project: 'demo-app', sessionId: '2099-01-01-nothing' }, 'SESSION_NOT_FOUND'],
      ['getCompressionRatio', { project: 'no-such-project' }, 'VALIDATION_ERROR', /demo-app/],
      ['getCompressionRatio', { project: 'demo-app', aggregate: 'yes' }, 'VALIDATION_ERROR'],
      // getPatternReuse
      ['getPatternReuse', { patternId: 'database/no-such-pattern' }, 'PATTERN_NOT_FOUND'],
      ['getPatternReuse', { patternId: 'nope' }, 'PATTERN_NOT_FOUND'],
      ['getPatternReuse', { sortBy: 'size' }, 'VALIDATION_ERROR'],
      // listProjects
      ['listProjects', { limit: 0 }, 'VALIDATION_ERROR'],
    ];
    const listed = new Set(ctx.tools.map((t) => t.name));
    const covered = new Set(cases.map(([tool]) => tool));
    assert.deepEqual([...listed].filter((t) => !covered.has(t)), [], 'a context tool without error cases here');
    const failures = [];
    for (const [tool, args, code, pattern] of cases) {
      try {
        await expectError(ctx, tool, args, code, pattern);
      } catch (e) {
        failures.push(e.message.split('\n')[0].slice(0, 700));
      }
    }
    assert.deepEqual(failures, []);
  });

  it('answers the success paths with results that match their outputSchema', async () => {
    await expectSuccess(ctx, 'searchPatterns', { keyword: 'retry' });
    await expectSuccess(ctx, 'loadSkill', { skillId: 'database/rls-policy-generator', includeCode: true });
    await expectSuccess(ctx, 'searchArtifacts', { keyword: 'rate' });
    await expectSuccess(ctx, 'loadSession', { project: 'demo-app', sessionId: '2025-10-15-authentication-flow', includeCode: true });
    await expectSuccess(ctx, 'getSessionCode', { project: 'demo-app', sessionId: '2025-10-15-authentication-flow' });
    await expectSuccess(ctx, 'getDecisions', { project: 'demo-app' });
    await expectSuccess(ctx, 'getHypotheses', { project: 'demo-app' });
    await expectSuccess(ctx, 'getBlockers', { project: 'demo-app' });
    await expectSuccess(ctx, 'getCompressionRatio', { project: 'demo-app' });
    await expectSuccess(ctx, 'getCompressionRatio', { project: 'demo-app', aggregate: true });
    await expectSuccess(ctx, 'getCompressionRatio', { project: 'demo-app', sessionId: '2025-11-02-rate-limiting' });
    await expectSuccess(ctx, 'getPatternReuse', {});
    await expectSuccess(ctx, 'executeSkill', { skillId: 'database/rls-policy-generator', input: { table: 'sessions' }, dryRun: true });
  });

  it('addresses a project one way: its name, or its absolute path inside the projects root (projectPath as a deprecated alias)', async () => {
    const byName = await expectSuccess(ctx, 'addNote', { project: 'demo-app', type: 'decision', content: 'by name' });
    assert.equal(byName.data.content, 'by name');
    await expectSuccess(ctx, 'addNote', { project: w.project, type: 'decision', content: 'by path' });
    await expectSuccess(ctx, 'addNote', { projectPath: w.project, type: 'decision', content: 'by the old name' });
    const decisions = await expectSuccess(ctx, 'getDecisions', { project: 'demo-app', limit: 3 });
    assert.deepEqual(decisions.data, ['by the old name', 'by path', 'by name']);
    const session = await expectSuccess(ctx, 'loadSession', { project: w.project, sessionId: '2025-10-15-authentication-flow' });
    assert.equal(session.data.project, 'demo-app');
    const saved = await expectSuccess(ctx, 'saveSession', { project: 'demo-app', sessionId: '2025-12-01-one-way', title: 't', summary: 's' });
    assert.equal(saved.data.project, 'demo-app');
    const metrics = await expectSuccess(ctx, 'getCompressionRatio', { project: 'demo-app' });
    assert.ok(metrics.data.every((m) => m.project === 'demo-app'));
  });

  it('lists the projects under the projects root', async () => {
    const listed = await expectSuccess(ctx, 'listProjects', {});
    const demo = listed.data.find((p) => p.name === 'demo-app');
    assert.ok(demo, JSON.stringify(listed));
    assert.equal(demo.hasArtifacts, true);
    assert.equal(demo.hasMemory, true);
    assert.ok(demo.sessionsCount >= 2, JSON.stringify(demo));
    assert.ok(!JSON.stringify(listed).includes(w.dir), 'listProjects shows server paths');
  });

  it('loads and executes a skill by its bare name when it is unique', async () => {
    const loaded = await expectSuccess(ctx, 'loadSkill', { skillId: 'rls-policy-generator' });
    assert.equal(loaded.data.id, 'database/rls-policy-generator');
    const dry = await expectSuccess(ctx, 'executeSkill', { skillId: 'rls-policy-generator', input: { table: 'sessions' }, dryRun: true });
    assert.equal(dry.metadata.skillId, 'database/rls-policy-generator');
  });

  it('loads a skill by its bare name in `toolport skills` when it is unique, and names the full ids otherwise', async () => {
    const unique = await runToolport(['skills', 'rls-policy-generator', '--json', '--url', server.url]);
    assert.equal(unique.status, 0, unique.stderr);
    assert.equal(JSON.parse(unique.stdout).uri, 'skill://database/rls-policy-generator/SKILL.md');
    const byId = await runToolport(['skills', 'testing/retry-with-backoff', '--json', '--url', server.url]);
    assert.equal(byId.status, 0, byId.stderr);
    assert.equal(JSON.parse(byId.stdout).uri, 'skill://testing/retry-with-backoff/SKILL.md');
    const ambiguous = await runToolport(['skills', 'retry-with-backoff', '--url', server.url]);
    assert.equal(ambiguous.status, 1, ambiguous.stdout);
    assert.match(ambiguous.stderr, /2 skills named retry-with-backoff: give the full id, one of: backend\/retry-with-backoff, testing\/retry-with-backoff/);
    const part = await runToolport(['skills', 'rls-policy', '--url', server.url]);
    assert.equal(part.status, 1, part.stdout);
    assert.match(part.stderr, /lists no skill rls-policy; did you mean database\/rls-policy-generator\?/);
    const listed = await runToolport(['skills', '--url', server.url]);
    assert.equal(listed.status, 0, listed.stderr);
    assert.match(listed.stdout, /^database\/rls-policy-generator\s/m);
  });

  it('gives examples in its descriptions that exist in the shipped library', async () => {
    const described = JSON.stringify(ctx.tools.map((t) => [t.description, t.inputSchema]));
    for (const [, id] of described.matchAll(/e\.g\. \\"([a-z-]+\/[a-z0-9-]+)\\"/g)) {
      if (id.startsWith('category/')) continue;
      const found = await call(ctx, 'loadSkill', { skillId: id });
      assert.ok(!found.isError, `the example ${id} is not in the shipped library`);
    }
    assert.ok(!described.includes('PrivateLanguage'), 'an example project that does not exist');
    assert.ok(!described.includes('/home/me'), 'an example path that does not exist');
    assert.match(described, /demo-app/);
  });
});

describe('context tools when the library and projects roots are missing', () => {
  let w;
  let server;
  let ctx;

  before(async () => {
    w = world({ patterns: false, projects: false });
    server = await startHttpServer({ config: w.config, packs: 'context' });
    ctx = { ...(await connect(server)), dir: w.dir };
  });
  after(async () => {
    await ctx?.client.close();
    await server?.stop();
    if (w) rmSync(w.dir, { recursive: true, force: true });
  });

  it('refuses with FILESYSTEM_ERROR instead of an empty success, and says so in /health and at start-up', async () => {
    await expectError(ctx, 'searchPatterns', {}, 'FILESYSTEM_ERROR', /pattern library/);
    await expectError(ctx, 'loadSkill', { skillId: 'database/rls-policy-generator' }, 'FILESYSTEM_ERROR', /pattern library/);
    await expectError(ctx, 'getPatternReuse', {}, 'FILESYSTEM_ERROR', /pattern library/);
    await expectError(ctx, 'executeSkill', { skillId: 'rls-policy-generator', input: {} }, 'FILESYSTEM_ERROR', /pattern library/);
    await expectError(ctx, 'addNote', { project: 'demo-app', type: 'decision', content: 'x' }, 'FILESYSTEM_ERROR', /projects root/);
    await expectError(ctx, 'searchArtifacts', {}, 'FILESYSTEM_ERROR', /projects root/);
    await expectError(ctx, 'listProjects', {}, 'FILESYSTEM_ERROR', /projects root/);
    const health = await (await fetch(`${server.base}/health`)).json();
    const components = JSON.stringify(health);
    assert.match(components, /context\.library/, components);
    assert.match(components, /context\.projects/, components);
    assert.ok(!components.includes(w.dir), `health shows server paths: ${components}`);
    assert.notEqual(health.status, 'healthy', components);
    assert.match(server.logs(), /context: .*pattern library/);
  });
});
