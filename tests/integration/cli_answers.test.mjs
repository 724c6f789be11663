// The CLI client answering a server and using extensions, against the real server on both
// wires: `--elicitation defaults|decline` (a session's elicitation/create, and the same
// question as an input_required result in 2026-07-28), and `toolport skills` against the
// context pack (listing, then a skill loaded with its files, each verified). The official
// client scenarios run in tests/conformance/client_run.sh.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runToolport, startHttpServer } from './lib/harness.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const NOT_DECLARED = /did not declare|Missing required client capability/;

for (const wire of ['2025-11-25', '2026-07-28']) {
  describe(`toolport call --elicitation (${wire} wire)`, () => {
    let server;
    before(async () => {
      server = await startHttpServer();
    });
    after(async () => {
      await server?.stop();
    });
    const call = (tool, args, ...flags) =>
      runToolport(['call', tool, JSON.stringify(args), '--url', server.url, '--protocol-version', wire, ...flags]);

    it('defaults: accepts with the requested schema defaults', async () => {
      const res = await call('test_elicitation_sep1034_defaults', {}, '--elicitation', 'defaults');
      assert.equal(res.status, 0, res.stderr);
      const content = JSON.parse(res.stdout.match(/content=(\{.*\})/)[1]);
      assert.deepEqual(content, { age: 30, name: 'John Doe', score: 95.5, status: 'active', verified: true });
    });

    it('decline: declines', async () => {
      const res = await call('test_elicitation', { message: 'Your name?' }, '--elicitation', 'decline');
      assert.equal(res.status, 0, res.stderr);
      assert.match(res.stdout, /action=decline/);
    });

    it('without the flag elicitation is not declared', async () => {
      const res = await call('test_elicitation', { message: 'Your name?' });
      assert.match(res.stdout + res.stderr, NOT_DECLARED);
    });

    it('a value the flag does not know is a usage error', async () => {
      const res = await call('test_elicitation', {}, '--elicitation', 'maybe');
      assert.notEqual(res.status, 0);
      assert.match(res.stderr, /--elicitation: maybe not in \{defaults,decline,cancel\}/);
    });
  });
}

describe('toolport skills against the context pack', () => {
  let server;
  let dir;
  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-skills-'));
    cpSync(path.join(root, 'examples/patterns'), path.join(dir, 'patterns'), { recursive: true });
    cpSync(path.join(root, 'examples/projects'), path.join(dir, 'projects'), { recursive: true });
    server = await startHttpServer({
      packs: 'context',
      env: {
        TOOLPORT_CONTEXT_PATTERNS: path.join(dir, 'patterns'),
        TOOLPORT_CONTEXT_PROJECTS: path.join(dir, 'projects'),
        XDG_CACHE_HOME: path.join(dir, 'cache'),
      },
    });
  });
  after(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const wire of ['2025-11-25', '2026-07-28']) {
    it(`lists, then loads a skill with its files, verified (${wire} wire)`, async () => {
      const listed = await runToolport(['skills', '--url', server.url, '--json', '--protocol-version', wire]);
      assert.equal(listed.status, 0, listed.stderr);
      const skills = JSON.parse(listed.stdout);
      assert.ok(skills.length > 0);
      const skill = skills.find((s) => s.resources.length > 1) ?? skills[0];
      const name = skill.frontmatter.name;

      const loaded = await runToolport(['skills', name, '--files', '--json', '--url', server.url, '--protocol-version', wire]);
      assert.equal(loaded.status, 0, loaded.stderr);
      const result = JSON.parse(loaded.stdout);
      assert.equal(result.uri, skill.uri);
      assert.match(result.text, new RegExp(`^---\\nname: "?${name}"?\\n`));
      assert.deepEqual(
        result.files.map((f) => f.uri),
        skill.resources.map((r) => r.uri).filter((u) => u !== skill.uri),
      );

      const missing = await runToolport(['skills', 'no-such-skill', '--url', server.url, '--protocol-version', wire]);
      assert.equal(missing.status, 1);
      assert.match(missing.stderr, /lists no skill no-such-skill/);
    });
  }
});
