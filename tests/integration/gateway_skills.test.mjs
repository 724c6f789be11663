// The Skills extension (SEP-2640) through the gateway: two upstream toolports serving the
// context pack on libraries whose skills share names with each other's and with the gateway's
// own context pack, all three served as one extension. Checked with the official TypeScript
// SDK client (digests and sizes recomputed from the bytes read through the gateway), with
// `toolport skills --files` (the repository's own verification: size, digest and frontmatter
// of every file), and with the Inspector CLI's `--method skills/list --verify`.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResultSchema, ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { runCommand, runToolport, startHttpServer, waitFor } from './lib/harness.mjs';

const require = createRequire(import.meta.url);
const INSPECTOR = require.resolve('@modelcontextprotocol/inspector/clients/launcher/build/index.js');
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SKILLS = 'io.modelcontextprotocol/skills';
const EXAMPLE_SKILLS = 6; // the skills of examples/patterns

// A copy of examples/ as a context pack's library, with `extra` files written into it; the
// config text that serves it.
function library(root, name, extra = {}) {
  const dir = path.join(root, name);
  cpSync(path.join(ROOT, 'examples'), dir, { recursive: true });
  for (const [file, text] of Object.entries(extra)) {
    mkdirSync(path.dirname(path.join(dir, 'patterns', file)), { recursive: true });
    writeFileSync(path.join(dir, 'patterns', file), text);
  }
  return {
    dir,
    config: [
      'packs:',
      '  context:',
      `    patterns_root: ${dir}/patterns`,
      `    projects_root: ${dir}/projects`,
      `    index_file: ${dir}/cache/index.sqlite`,
      '',
    ].join('\n'),
  };
}

const sha256 = (bytes) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

async function allSkills(client) {
  const skills = [];
  let cursor;
  do {
    const page = await client.request({ method: 'skills/list', params: cursor ? { cursor } : {} }, ResultSchema);
    skills.push(...page.skills);
    cursor = page.nextCursor;
  } while (cursor);
  return skills;
}

describe('the Skills extension through the gateway', () => {
  let root;
  let betaDir;
  let alpha;
  let beta;
  let gateway;
  let client;
  const listChanged = [];

  before(async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'toolport-gateway-skills-'));
    const own = library(root, 'own');
    const alphaLib = library(root, 'alpha', {
      'backend/alpha-runbook.md': '# Alpha Runbook\n\n## Overview\n\nHow the alpha team restarts its services.\n',
    });
    // beta's rls-policy-generator has other bytes than alpha's and the gateway's own.
    const betaLib = library(root, 'beta', {
      'testing/beta-notes.md': '# Beta Notes\n\n## Overview\n\nWhat the beta team writes down after an incident.\n',
    });
    const rls = path.join(betaLib.dir, 'patterns/database/rls-policy-generator.py');
    writeFileSync(rls, `${readFileSync(rls, 'utf8')}\n# beta's own copy\n`);
    betaDir = betaLib.dir;
    alpha = await startHttpServer({ config: alphaLib.config, packs: 'context' });
    beta = await startHttpServer({ config: betaLib.config, packs: 'context' });
    const config = [
      own.config.trimEnd(),
      'upstreams:',
      `  alpha: {url: "${alpha.url}"}`,
      `  beta: {url: "${beta.url}"}`,
      '',
    ].join('\n');
    gateway = await startHttpServer({ config, packs: 'context' });
    client = new Client({ name: 'toolport-it-gateway-skills', version: '1.0.0' }, { capabilities: {} });
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => listChanged.push(Date.now()));
    // The gateway connects to its upstreams in the background.
    await waitFor(
      'both upstreams\' skills served by the gateway',
      async () => {
        const probe = new Client({ name: 'probe', version: '1.0.0' }, { capabilities: {} });
        await probe.connect(new StreamableHTTPClientTransport(new URL(gateway.url)));
        try {
          if (!probe.getServerCapabilities().extensions?.[SKILLS]) return false;
          const skills = await allSkills(probe);
          return skills.some((s) => s.uri.startsWith('skill://alpha/')) && skills.some((s) => s.uri.startsWith('skill://beta/'));
        } finally {
          await probe.close();
        }
      },
      20000,
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)));
  });

  after(async () => {
    await client?.close();
    await gateway?.stop();
    await alpha?.stop();
    await beta?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('lists the own skills and both upstreams\' side by side, prefixing only the names taken before', async () => {
    assert.deepEqual(client.getServerCapabilities().extensions?.[SKILLS], { directoryRead: true });
    const skills = await allSkills(client);
    const uris = skills.map((s) => s.uri);
    assert.equal(new Set(uris).size, uris.length, `each URI once: ${uris.join(', ')}`);
    const own = uris.filter((u) => !u.startsWith('skill://alpha/') && !u.startsWith('skill://beta/') && !/\/(alpha-runbook|beta-notes|beta-added)\//.test(u));
    assert.equal(own.length, EXAMPLE_SKILLS, own.join(', '));
    assert.ok(own.includes('skill://database/rls-policy-generator/SKILL.md'));
    // Every example skill of each upstream collides with the gateway's own: under its prefix.
    for (const upstream of ['alpha', 'beta']) {
      const mine = uris.filter((u) => u.startsWith(`skill://${upstream}/`));
      assert.equal(mine.length, EXAMPLE_SKILLS, `${upstream}: ${mine.join(', ')}`);
      assert.ok(mine.includes(`skill://${upstream}/database/rls-policy-generator/SKILL.md`));
    }
    // The names nobody had before keep their URIs.
    assert.ok(uris.includes('skill://backend/alpha-runbook/SKILL.md'), uris.join(', '));
    assert.ok(uris.includes('skill://testing/beta-notes/SKILL.md'), uris.join(', '));
    // The last segment is still the name; every file lies under its skill's (served) root.
    for (const s of skills) {
      assert.equal(s.uri.split('/').at(-2), s.frontmatter.name, s.uri);
      const root = s.uri.slice(0, -'/SKILL.md'.length);
      for (const f of s.resources) assert.ok(f.uri === s.uri || f.uri.startsWith(`${root}/`), f.uri);
    }
  });

  it('reads every file of every skill from its owner with the listed digest and size', async () => {
    const skills = await allSkills(client);
    const digests = {};
    for (const s of skills) {
      for (const file of s.resources) {
        const read = await client.readResource({ uri: file.uri });
        assert.equal(read.contents[0].uri, file.uri);
        const bytes = Buffer.from(read.contents[0].text, 'utf8');
        assert.equal(bytes.length, file.size, file.uri);
        assert.equal(sha256(bytes), file.digest, file.uri);
        digests[file.uri] = file.digest;
      }
    }
    // beta's copy is its own: the same relative file has other bytes there than at alpha.
    const script = 'database/rls-policy-generator/scripts/rls-policy-generator.py';
    assert.equal(digests[`skill://alpha/${script}`], digests[`skill://${script}`]);
    assert.notEqual(digests[`skill://beta/${script}`], digests[`skill://alpha/${script}`]);
  });

  it('answers skills/get and resources/directory/read for the owner\'s skill, under the served URIs', async () => {
    const skills = await allSkills(client);
    const listed = skills.find((s) => s.uri === 'skill://beta/database/rls-policy-generator/SKILL.md');
    const got = await client.request({ method: 'skills/get', params: { uri: listed.uri } }, ResultSchema);
    assert.deepEqual(got.skill, listed);
    const own = await client.request(
      { method: 'skills/get', params: { uri: 'skill://database/rls-policy-generator/SKILL.md' } },
      ResultSchema,
    );
    assert.equal(own.skill.uri, 'skill://database/rls-policy-generator/SKILL.md');
    for (const uri of ['skill://beta/database/nope/SKILL.md', 'skill://nowhere/nope/SKILL.md']) {
      await assert.rejects(client.request({ method: 'skills/get', params: { uri } }, ResultSchema), (e) => e.code === -32602, uri);
    }
    const dir = await client.request(
      { method: 'resources/directory/read', params: { uri: 'skill://beta/database/rls-policy-generator' } },
      ResultSchema,
    );
    assert.deepEqual(
      dir.resources.map((r) => [r.uri, r.mimeType]),
      [
        ['skill://beta/database/rls-policy-generator/SKILL.md', 'text/markdown'],
        ['skill://beta/database/rls-policy-generator/references', 'inode/directory'],
        ['skill://beta/database/rls-policy-generator/scripts', 'inode/directory'],
      ],
    );
    // The SKILL.md files are resources of the gateway, named from their frontmatter.
    const resources = (await client.listResources()).resources;
    const md = resources.find((r) => r.uri === listed.uri);
    assert.equal(md?.name, 'rls-policy-generator');
    assert.equal(md?.description, listed.frontmatter.description);
  });

  it('loads an upstream skill with the repository\'s verification (toolport skills --files)', async () => {
    const run = await runToolport(['skills', 'skill://beta/database/rls-policy-generator/SKILL.md', '--files', '--json', '--url', gateway.url]);
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    const loaded = JSON.parse(run.stdout);
    assert.equal(loaded.uri, 'skill://beta/database/rls-policy-generator/SKILL.md');
    assert.equal(loaded.files.length, 2, run.stdout.slice(0, 400));
    assert.match(loaded.files.find((f) => f.uri.endsWith('.py')).text, /# beta's own copy/);
  });

  it('passes the Inspector CLI\'s skills verification (--method skills/list --verify)', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'toolport-inspector-'));
    try {
      const out = await runCommand(
        process.execPath,
        [INSPECTOR, '--cli', '--format', 'json', '--connect-timeout', '20000', '--method', 'skills/list', '--verify',
          '--transport', 'http', '--server-url', gateway.url],
        { env: { HOME: home, MCP_CATALOG_PATH: path.join(home, 'mcp.json') } },
      );
      assert.equal(out.status, 0, `${out.stdout}\n${out.stderr}`);
      const reports = out.stdout.trim().split('\n').map((line) => JSON.parse(line));
      assert.equal(reports.length, 3 * EXAMPLE_SKILLS + 2, out.stdout.slice(0, 600));
      for (const report of reports) assert.equal(report.outcome, 'verified', JSON.stringify(report));
      // Names the three sources share are told apart by URI: a warning, not a failure.
      const beta = reports.find((r) => r.uri === 'skill://beta/database/rls-policy-generator/SKILL.md');
      assert.ok(beta?.conformance.some((c) => c.code === 'duplicate-name' && c.severity === 'warning'), JSON.stringify(beta));
      assert.ok(reports.find((r) => r.uri === 'skill://testing/beta-notes/SKILL.md')?.files.length >= 1);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('passes an upstream\'s list_changed on, with its new skill served', async () => {
    const before = listChanged.length;
    writeFileSync(
      path.join(betaDir, 'patterns/security/beta-added.md'),
      '# Beta Added\n\n## Overview\n\nA skill the beta library gained while the gateway served it.\n',
    );
    await waitFor('notifications/resources/list_changed from the gateway', () => listChanged.length > before, 15000);
    await waitFor(
      'the new skill in the gateway\'s skills/list',
      async () => (await allSkills(client)).some((s) => s.uri === 'skill://security/beta-added/SKILL.md'),
      15000,
    );
    const read = await client.readResource({ uri: 'skill://security/beta-added/SKILL.md' });
    assert.match(read.contents[0].text, /# Beta Added/);
  });

  it('drops the skills of an upstream that goes away', async () => {
    await beta.stop();
    beta = null;
    await waitFor(
      'beta\'s skills gone from the gateway\'s skills/list',
      async () => !(await allSkills(client)).some((s) => s.uri.startsWith('skill://beta/') || s.uri.includes('/beta-')),
      20000,
    );
    const skills = await allSkills(client);
    assert.equal(skills.length, 2 * EXAMPLE_SKILLS + 1, skills.map((s) => s.uri).join(', '));
    await assert.rejects(client.readResource({ uri: 'skill://beta/database/rls-policy-generator/SKILL.md' }));
  });
});
