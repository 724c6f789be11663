// `toolport serve --import FILE` where FILE (a Claude Desktop mcpServers.json) lists Toolport
// itself importing FILE: without a guard every level imports the same file and starts the
// next one. The entry that names the same file is skipped with a warning, and a Toolport
// started from an import of FILE (the TOOLPORT_IMPORTED_FILES marker its parent passes
// down, for wrappers whose arguments do not show the file) does not import it again.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TOOLPORT_BIN, track } from './lib/harness.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-import-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// The processes whose command line names `needle` (a file of this test's directory).
function processesNaming(needle) {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes(needle)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

// Serves FILE over stdio for `ms` (stdin kept open), then counts the Toolport processes
// that import it, ends the whole tree, and returns the count and the top level's stderr.
async function serveImport(file, ms = 3000) {
  const child = track(spawn(TOOLPORT_BIN, ['serve', '--stdio', '--import', file], { stdio: ['pipe', 'pipe', 'pipe'] }));
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => (stderr += d));
  child.stdout.resume();
  await sleep(ms);
  const running = processesNaming(file).length + processesNaming(path.join(dir, 'wrapper.sh')).length;
  child.stdin.end();
  child.kill('SIGTERM');
  // Each level ends when its parent closes its stdin; any left over are ended by pid.
  for (let i = 0; i < 50 && processesNaming(dir).length > 0; ++i) await sleep(100);
  for (const pid of processesNaming(dir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  return { running, stderr };
}

describe('serve --import of a file that lists Toolport itself', () => {
  it('skips the entry that imports the same file, with a warning', async () => {
    const file = path.join(dir, 'direct.json');
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          toolport: { command: TOOLPORT_BIN, args: ['serve', '--stdio', '--import', file] },
          conformance: { command: TOOLPORT_BIN, args: ['serve', '--stdio', '--packs', 'conformance'] },
        },
      }),
    );
    const { running, stderr } = await serveImport(file);
    assert.equal(running, 1, `only the top level imports the file; stderr:\n${stderr}`);
    assert.match(stderr, /skipped the server \\?"toolport\\?": it is Toolport importing this same file/);
  });

  it('a wrapper the arguments do not show: the child does not import the file again', async () => {
    const file = path.join(dir, 'wrapped.json');
    const wrapper = path.join(dir, 'wrapper.sh');
    writeFileSync(wrapper, `#!/bin/sh\nexec '${TOOLPORT_BIN}' serve --stdio --import '${file}'\n`);
    chmodSync(wrapper, 0o755);
    writeFileSync(file, JSON.stringify({ mcpServers: { toolport: { command: wrapper } } }));
    const { running, stderr } = await serveImport(file);
    // The top level, and the one it started through the wrapper; no third.
    assert.equal(running, 2, `two levels, not more; stderr:\n${stderr}`);
  });
});
