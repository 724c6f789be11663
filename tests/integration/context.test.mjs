// The context pack in the real binary, on a copy of examples/ (the example pattern library
// and project that scripts/serve.sh serves): the YAML specs of tests/specs/context for all
// 15 tools, durability of addNote across kill -9, a pattern written to disk while serving
// found by the next search and announced to clients, and the pattern library read through
// the MCP Skills extension by the official TypeScript SDK client.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResultSchema, ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { runToolport, startHttpServer, post, initializeSession, LATEST, sleep, withTimeout } from './lib/harness.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const SPECS = path.join(ROOT, 'tests/specs/context');
const SKILLS = 'io.modelcontextprotocol/skills';

// A fresh copy of examples/ with a config that serves it (and an index file beside it).
function exampleWorld() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-context-'));
  cpSync(path.join(ROOT, 'examples'), dir, { recursive: true });
  const config = [
    'packs:',
    '  context:',
    `    patterns_root: ${dir}/patterns`,
    `    projects_root: ${dir}/projects`,
    `    index_file: ${dir}/cache/index.sqlite`,
    '',
  ].join('\n');
  const configFile = path.join(dir, 'toolport.yaml');
  writeFileSync(configFile, config);
  return { dir, config, configFile, project: path.join(dir, 'projects/demo-app') };
}


const envelope = (res, id) => {
  const reply = res.messages.find((m) => m.id === id);
  assert.ok(reply?.result, `no result for ${id}: ${res.text.slice(0, 400)}`);
  return reply.result.structuredContent;
};

describe('context pack', () => {
  it('passes the YAML specs of all 15 tools (toolport test)', async () => {
    const world = exampleWorld();
    try {
      // The specs name the project by its name or by its absolute path (__PROJECT__).
      const specs = path.join(world.dir, 'specs');
      mkdirSync(specs);
      for (const file of readdirSync(SPECS)) {
        writeFileSync(path.join(specs, file), readFileSync(path.join(SPECS, file), 'utf8').replaceAll('__PROJECT__', world.project));
      }
      const run = await runToolport(['test', specs, '--config', world.configFile]);
      assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
      assert.match(run.stdout, /26 passed, 0 failed/);
      const tools = new Set(
        readdirSync(SPECS).map((f) => /^tool: (\w+)/m.exec(readFileSync(path.join(SPECS, f), 'utf8'))[1]),
      );
      assert.equal(tools.size, 15, `specs cover ${[...tools].join(', ')}`);
      // extractPattern's three files, in the original's convention.
      const skillMd = readFileSync(path.join(world.dir, 'patterns/backend/idempotency-keys-SKILL.md'), 'utf8');
      assert.match(skillMd, /\*\*Declared Quality Score:\*\* 8\.2\/10/);
      assert.match(skillMd, /\| Reusability \| 8\/10 \| any HTTP framework \|/);
      assert.ok(readFileSync(path.join(world.dir, 'patterns/backend/idempotency-keys.js'), 'utf8').includes('idempotencyKeys'));
    } finally {
      rmSync(world.dir, { recursive: true, force: true });
    }
  });

  it('keeps every acknowledged addNote across kill -9 in the middle of a burst', async () => {
    const world = exampleWorld();
    let server = await startHttpServer({ config: world.config, packs: 'context' });
    try {
      const { sessionId } = await initializeSession(server);
      const acknowledged = [];
      let next = 100;
      let killed = false;
      const worker = async () => {
        while (!killed) {
          const id = next++;
          const content = `burst note ${id}`;
          try {
            const res = await post(
              server,
              { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'addNote', arguments: { projectPath: world.project, type: 'decision', content } } },
              { sessionId, protocolVersion: LATEST, timeoutMs: 5000 },
            );
            if (envelope(res, id)?.success === true) acknowledged.push(content);
          } catch {
            return; // the server died under this request: not acknowledged
          }
        }
      };
      const workers = Array.from({ length: 6 }, worker);
      while (acknowledged.length < 60) await sleep(5);
      server.child.kill('SIGKILL');
      killed = true;
      await Promise.all(workers);
      assert.ok(acknowledged.length >= 60);

      server = await startHttpServer({ config: world.config, packs: 'context' });
      const { sessionId: again } = await initializeSession(server);
      // Every decision, page by page.
      const recalled = [];
      let cursor;
      let id = 2;
      do {
        const args = { projectPath: world.project, limit: 500, ...(cursor ? { cursor } : {}) };
        const res = await post(
          server,
          { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'getDecisions', arguments: args } },
          { sessionId: again, protocolVersion: LATEST },
        );
        const decisions = envelope(res, id++);
        assert.equal(decisions.success, true, JSON.stringify(decisions));
        recalled.push(...decisions.data);
        cursor = decisions.metadata.nextCursor;
      } while (cursor);
      for (const note of acknowledged) assert.ok(recalled.includes(note), `acknowledged note lost: ${note}`);
      // Each note once, none interleaved: every line but a torn last one is a whole note.
      const lines = readFileSync(path.join(world.project, '.agent-memory/session-notes.jsonl'), 'utf8').split('\n').filter(Boolean);
      const parsed = lines.slice(0, -1).map((l) => JSON.parse(l));
      assert.equal(new Set(parsed.map((n) => n.content)).size, parsed.length);
    } finally {
      await server.stop();
      rmSync(world.dir, { recursive: true, force: true });
    }
  });

  describe('served over HTTP', () => {
    let world;
    let server;
    let client;
    const listChanged = [];

    before(async () => {
      world = exampleWorld();
      server = await startHttpServer({ config: world.config, packs: 'context' });
      client = new Client({ name: 'toolport-it-skills', version: '1.0.0' }, { capabilities: {} });
      client.setNotificationHandler(ResourceListChangedNotificationSchema, () => listChanged.push(Date.now()));
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    });
    after(async () => {
      await client?.close();
      await server?.stop();
      if (world) rmSync(world.dir, { recursive: true, force: true });
    });

    it('lists and reads skills through the Skills extension with the SDK client', async () => {
      const caps = client.getServerCapabilities();
      assert.deepEqual(caps.extensions?.[SKILLS], { directoryRead: true }, JSON.stringify(caps));
      assert.ok(caps.resources);

      const listed = await client.request({ method: 'skills/list', params: {} }, ResultSchema);
      const names = listed.skills.map((s) => s.frontmatter.name);
      assert.deepEqual(names, [
        'retry-with-backoff',
        'keyset-pagination',
        'rls-policy-generator',
        'tool-description-style',
        'input-sanitizer',
        'flaky-test-triage',
      ]);
      const rls = listed.skills.find((s) => s.frontmatter.name === 'rls-policy-generator');
      assert.equal(rls.uri, 'skill://database/rls-policy-generator/SKILL.md');
      assert.equal(rls.frontmatter.metadata.quality, '8.5');

      // Every listed file reads back with the digest and size the entry gives.
      for (const file of rls.resources) {
        const read = await client.readResource({ uri: file.uri });
        const bytes = Buffer.from(read.contents[0].text, 'utf8');
        assert.equal(bytes.length, file.size, file.uri);
        assert.equal(`sha256:${createHash('sha256').update(bytes).digest('hex')}`, file.digest, file.uri);
      }
      const skillMd = (await client.readResource({ uri: rls.uri })).contents[0];
      assert.equal(skillMd.mimeType, 'text/markdown');
      assert.match(skillMd.text, /^---\nname: "rls-policy-generator"\ndescription: "Row-level security policies/);
      assert.match(skillMd.text, /# RLS Policy Generator/);
      assert.deepEqual(
        rls.resources.map((r) => r.uri),
        [
          'skill://database/rls-policy-generator/SKILL.md',
          'skill://database/rls-policy-generator/references/rls-policy-generator-SKILL.md',
          'skill://database/rls-policy-generator/scripts/rls-policy-generator.py',
        ],
      );

      const got = await client.request({ method: 'skills/get', params: { uri: rls.uri } }, ResultSchema);
      assert.deepEqual(got.skill, rls);
      await assert.rejects(
        client.request({ method: 'skills/get', params: { uri: 'skill://database/nope/SKILL.md' } }, ResultSchema),
        (e) => e.code === -32602,
      );

      const dir = await client.request(
        { method: 'resources/directory/read', params: { uri: 'skill://database/rls-policy-generator' } },
        ResultSchema,
      );
      assert.deepEqual(
        dir.resources.map((r) => [r.uri, r.mimeType]),
        [
          ['skill://database/rls-policy-generator/SKILL.md', 'text/markdown'],
          ['skill://database/rls-policy-generator/references', 'inode/directory'],
          ['skill://database/rls-policy-generator/scripts', 'inode/directory'],
        ],
      );
      const category = await client.request({ method: 'resources/directory/read', params: { uri: 'skill://database' } }, ResultSchema);
      assert.deepEqual(category.resources.map((r) => r.name), ['keyset-pagination', 'rls-policy-generator']);
      await assert.rejects(
        client.request({ method: 'resources/directory/read', params: { uri: rls.uri } }, ResultSchema),
        (e) => e.code === -32602,
      );
      // Hostile URIs name nothing.
      for (const uri of ['skill://database/../../etc/passwd', 'skill://database/rls-policy-generator/../../x']) {
        await assert.rejects(client.readResource({ uri }), (e) => e.code === -32002 || e.code === -32602, uri);
      }

      // Plain MCP clients see the SKILL.md files in resources/list.
      const resources = await client.listResources();
      const listedMd = resources.resources.find((r) => r.uri === rls.uri);
      assert.equal(listedMd.name, 'rls-policy-generator');
      assert.equal(listedMd.description, rls.frontmatter.description);
    });

    it('finds a pattern written to disk while serving on the next search, and announces it', async () => {
      const before = listChanged.length;
      const folder = path.join(world.dir, 'patterns/security');
      writeFileSync(path.join(folder, 'csrf-double-submit.md'), '# CSRF Double Submit\n\n## Overview\n\nDouble-submit cookie tokens against cross-site request forgery.\n');
      const found = await client.callTool({ name: 'searchPatterns', arguments: { keyword: 'forgery' } });
      assert.equal(found.structuredContent.data[0]?.id, 'security/csrf-double-submit', JSON.stringify(found.structuredContent));

      await withTimeout(
        (async () => {
          while (listChanged.length === before) await sleep(10);
        })(),
        5000,
        'notifications/resources/list_changed after a pattern was added',
      );
      const listed = await client.request({ method: 'skills/list', params: {} }, ResultSchema);
      assert.ok(listed.skills.some((s) => s.uri === 'skill://security/csrf-double-submit/SKILL.md'));
      const resources = await client.listResources();
      assert.ok(resources.resources.some((r) => r.uri === 'skill://security/csrf-double-submit/SKILL.md'));
    });
  });
});
