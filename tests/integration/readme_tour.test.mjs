// The README's five-minute tour, run as a user pastes it. Each ```sh block right after a
// `<!-- tour: NAME -->` comment runs in bash (-e: the first command that fails fails the tour)
// from the repository's root, with the binary under test as `toolport` on PATH, and its output
// is checked against what the tour promises. Where the real service cannot be reached from a
// test, the tour runs against the fixture the README offers in its place (the Tango API,
// AgentPMT's catalog, the inventory API: tests/fixtures, in their real wire format), and `npx`
// runs the server-everything installed in tests/integration/node_modules instead of fetching it.
// A tour without checks here, or checks without their tour, fail too: the two stay in step.
// The configuration examples of docs/ (```yaml blocks) pass `toolport config check` too.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SANITIZER_REPORT, TOOLPORT_BIN, runCommand, runToolport } from './lib/harness.mjs';
import { NODE, EVERYTHING } from './lib/gateway_setup.mjs';
import { startTangoFixture } from '../fixtures/tango/server.mjs';
import { startCatalogFixture } from '../fixtures/agentpmt/server.mjs';
import { startInventoryFixture } from '../fixtures/openapi/server.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

// The tour's blocks, by name, in the README's order.
function tourBlocks(markdown) {
  const blocks = new Map();
  for (const m of markdown.matchAll(/^<!-- tour: ([a-z0-9-]+) -->\n```sh\n([\s\S]*?)\n```$/gm)) {
    assert.ok(!blocks.has(m[1]), `two tours named ${m[1]}`);
    blocks.set(m[1], m[2]);
  }
  return blocks;
}

const TOURS = tourBlocks(README);
// The port the README's OpenAPI tour names for the inventory fixture it starts; the test's
// fixture listens on a free port, so that address is rewritten to it.
const INVENTORY_IN_README = 'http://127.0.0.1:8788';

let tmp;
let bin;
let tango;
let catalog;
let inventory;

// Per tour: the environment it runs with (as the README's set-up lines export it, pointed at the
// test's fixtures), rewrites of the block's text, and what its output must show.
const CHECKS = {
  tango: {
    env: () => ({ TANGO_BASE_URL: tango.url, TANGO_API_KEY: 'test-key' }),
    check: (out) => {
      assert.match(out, /^5 tools$/m);
      assert.match(out, /^search_tango_contracts\(/m);
      assert.match(out, /"name": "00ALPHA, LLC"/);
      assert.match(out, /"total": 19\b/);
    },
  },
  context: {
    env: () => ({}),
    check: (out) => {
      assert.match(out, /"id": "backend\/retry-with-backoff"/);
      assert.match(out, /^database\/rls-policy-generator\s/m);
    },
  },
  'rest-catalog': {
    env: () => ({
      AGENT_PAYMENT_API_URL: catalog.url,
      AGENT_PAYMENT_API_KEY: catalog.apiKey,
      AGENT_PAYMENT_BUDGET_KEY: catalog.budgetKey,
    }),
    check: (out) => {
      const listed = out.match(/^(\d+) tools$/m);
      assert.ok(listed && Number(listed[1]) >= 200, `the catalog's tools listed: ${out.slice(-300)}`);
      assert.match(out, /^word-count\(text\)/m);
      assert.match(out, /^3 words$/m);
    },
  },
  openapi: {
    env: () => ({ OPENAPI_API_KEY: 'inventory-key' }),
    rewrite: () => [[INVENTORY_IN_README, inventory.url]],
    check: (out) => {
      assert.match(out, /^10 tools$/m);
      assert.match(out, /^getItem\(itemId\)/m);
      assert.match(out, /"name": "Widget"/);
    },
  },
  gateway: {
    env: () => ({}),
    check: (out) => {
      assert.match(out, /^get-sum\(a, b\)/m);
      assert.match(out, /The sum of 2 and 3 is 5\./);
    },
  },
};

async function runTour(name) {
  const spec = CHECKS[name];
  let block = TOURS.get(name);
  for (const [from, to] of spec.rewrite?.() ?? []) {
    assert.ok(block.includes(from), `the ${name} tour no longer names ${from}`);
    block = block.split(from).join(to);
  }
  const res = await runCommand('bash', ['-e', '-o', 'pipefail', '-c', `cd "$TOUR_ROOT"\n${block}`], {
    env: {
      TOUR_ROOT: ROOT,
      PATH: `${bin}:${process.env.PATH}`,
      // The context pack's search index and the CLI's token store stay out of the user's home.
      XDG_CACHE_HOME: path.join(tmp, 'cache'),
      XDG_CONFIG_HOME: path.join(tmp, 'config'),
      ...spec.env(),
    },
    timeoutMs: 50000,
  });
  assert.equal(res.status, 0, `the ${name} tour failed (exit ${res.status}):\n${block}\n--- stdout:\n${res.stdout.slice(-2000)}\n--- stderr:\n${res.stderr.slice(-3000)}`);
  assert.doesNotMatch(res.stderr, SANITIZER_REPORT);
  spec.check(res.stdout);
}

describe("the README's tour", () => {
  before(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'toolport-tour-'));
    bin = path.join(tmp, 'bin');
    // `toolport` is the binary under test; `npx` serves the one package the tour fetches.
    mkdirSync(bin);
    symlinkSync(TOOLPORT_BIN, path.join(bin, 'toolport'));
    const npx = path.join(bin, 'npx');
    writeFileSync(
      npx,
      `#!/bin/sh
# npx for the README tour: @modelcontextprotocol/server-everything from tests/integration/node_modules.
[ "$1" = "-y" ] && shift
if [ "$1" = "@modelcontextprotocol/server-everything" ]; then
  shift
  exec ${JSON.stringify(NODE)} ${JSON.stringify(EVERYTHING)} "$@"
fi
echo "readme_tour: npx $* is not available offline" >&2
exit 1
`,
    );
    chmodSync(npx, 0o755);
    tango = await startTangoFixture({ apiKeys: ['test-key'] });
    catalog = await startCatalogFixture();
    inventory = await startInventoryFixture();
  });

  after(async () => {
    await Promise.all([tango?.close(), catalog?.close(), inventory?.close()]);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('has a tour for each source kind, and checks for each tour', () => {
    assert.deepEqual([...TOURS.keys()].sort(), Object.keys(CHECKS).sort());
    // A marker whose block the parser cannot find (a typo, a ``` without sh) is no silent skip.
    assert.equal((README.match(/<!-- tour:/g) ?? []).length, TOURS.size);
  });

  for (const name of Object.keys(CHECKS)) {
    it(`runs the ${name} tour`, async () => {
      assert.ok(TOURS.has(name), `README.md has no <!-- tour: ${name} --> block`);
      await runTour(name);
    });
  }
});

// Every ```yaml block of docs/ is a Toolport configuration (or a part of one), except in the
// pages about other formats: the YAML specs of `toolport test`, and the generated reference.
const NOT_CONFIG = new Set(['specs.md', 'configuration.md']);

function docsYamlExamples() {
  const examples = [];
  const docs = path.join(ROOT, 'docs');
  for (const entry of readdirSync(docs, { recursive: true })) {
    const file = String(entry);
    if (!file.endsWith('.md') || NOT_CONFIG.has(path.basename(file))) continue;
    const text = readFileSync(path.join(docs, file), 'utf8');
    let n = 0;
    for (const m of text.matchAll(/^```yaml\n([\s\S]*?)\n```$/gm)) examples.push({ page: `docs/${file}`, n: ++n, yaml: m[1] });
  }
  return examples.sort((a, b) => a.page.localeCompare(b.page) || a.n - b.n);
}

describe("the docs' configuration examples", () => {
  const examples = docsYamlExamples();

  it('are found', () => {
    assert.ok(examples.length >= 8, `${examples.length} yaml blocks in docs/`);
  });

  for (const { page, n, yaml } of examples) {
    it(`${page}, example ${n}, passes toolport config check`, async (t) => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-docs-'));
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      const file = path.join(dir, 'example.yaml');
      writeFileSync(file, `${yaml}\n`);
      // The variables an example's values name (secrets, tokens) are set, as a reader would set
      // them; not the ones its comments mention, which may be overrides with formats of their own.
      const env = {};
      const values = yaml.replace(/(^|\s)#.*$/gm, '');
      for (const name of values.match(/\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b/g) ?? []) env[name] = 'example-value';
      const res = await runToolport(['config', 'check', file], { env });
      assert.equal(res.status, 0, `${page}, example ${n}:\n${yaml}\n--- ${res.stderr}${res.stdout}`);
      assert.doesNotMatch(res.stderr, SANITIZER_REPORT);
    });
  }
});
