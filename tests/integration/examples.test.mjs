// Every ready configuration in examples/ passes `toolport config check` (with ${PWD} the
// repository's root, as when run from there), and there is one for each kind of source and for
// the gateway, so a new user can start from a file that works.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runToolport } from './lib/harness.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const EXAMPLES = path.join(ROOT, 'examples');
const files = readdirSync(EXAMPLES).filter((name) => name.endsWith('.yaml')).sort();

describe('examples/*.yaml', () => {
  it('has a ready config for each source kind and the gateway', () => {
    for (const name of ['context.yaml', 'gateway.yaml', 'openapi.yaml', 'rest-catalog.yaml', 'tango.yaml']) {
      assert.ok(files.includes(name), `examples/${name} (found: ${files.join(', ')})`);
    }
  });

  for (const name of files) {
    it(`toolport config check examples/${name}`, async () => {
      // ${PWD} in a file is the repository's root, as in a shell there.
      const file = path.join(EXAMPLES, name);
      const res = await runToolport(['config', 'check', file], { env: { PWD: ROOT } });
      assert.equal(res.status, 0, res.stderr);
      assert.ok(res.stdout.startsWith(`${file}: OK\n`), res.stdout);
    });
  }
});
