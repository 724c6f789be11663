// Upstreams named by their MCP Registry entry (docs/registry.md), against a registry fixture
// speaking the v0.1 API (tests/fixtures/registry/server.mjs):
//  - server-everything as an npm package, run through the real `npx` offline: the pinned
//    Node first on PATH (npx runs on it), the upstream's cwd this folder, whose
//    node_modules holds @modelcontextprotocol/server-everything at the published version,
//    so `npx -y @modelcontextprotocol/server-everything@<version>` runs the installed
//    package; npm_config_offline=true makes any attempt to download fail instead;
//  - a remote streamable-http server (a Toolport with the conformance pack);
//  - an entry written in the first server.json release (2025-07-09, snake_case) with a
//    required secret environment variable.
// Resolution, start, `latest` pinned in the state directory, `toolport registry update`
// moving it, the registry down at start-up, and the CLI (search with paging, show, add).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startHttpServer, runToolport, waitFor } from './lib/harness.mjs';
import { NODE, text } from './lib/gateway_setup.mjs';
import { startRegistryFixture } from '../fixtures/registry/server.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const EVERYTHING_VERSION = JSON.parse(
  readFileSync(path.join(HERE, 'node_modules/@modelcontextprotocol/server-everything/package.json'), 'utf8'),
).version;
// npx runs on the first `node` of PATH: the pinned one.
const PATH = `${path.dirname(NODE)}:${process.env.PATH}`;

const EVERYTHING_NAME = 'io.github.modelcontextprotocol/server-everything';
const REMOTE_NAME = 'io.github.toolport/conformance';
const SECRET_NAME = 'io.github.example/needs-token';

const everythingEntry = {
  $schema: 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json',
  name: EVERYTHING_NAME,
  description: 'MCP server that exercises all the features of the MCP protocol',
  version: EVERYTHING_VERSION,
  packages: [
    {
      registryType: 'npm',
      registryBaseUrl: 'https://registry.npmjs.org',
      identifier: '@modelcontextprotocol/server-everything',
      version: EVERYTHING_VERSION,
      transport: { type: 'stdio' },
      packageArguments: [{ type: 'positional', valueHint: 'transport', value: 'stdio' }],
    },
  ],
};
const remoteEntry = (version, url) => ({
  $schema: 'https://static.modelcontextprotocol.io/schemas/2025-10-17/server.schema.json',
  name: REMOTE_NAME,
  description: 'A Toolport serving its conformance pack',
  version,
  remotes: [{ type: 'streamable-http', url }],
});
// The first release's spelling (registry_type, environment_variables, is_required).
const secretEntry = {
  $schema: 'https://static.modelcontextprotocol.io/schemas/2025-07-09/server.schema.json',
  name: SECRET_NAME,
  description: 'server-everything behind a token',
  version: '0.3.0',
  packages: [
    {
      registry_type: 'npm',
      identifier: '@modelcontextprotocol/server-everything',
      version: EVERYTHING_VERSION,
      transport: { type: 'stdio' },
      package_arguments: [{ type: 'positional', value_hint: 'transport', value: 'stdio' }],
      environment_variables: [
        { name: 'EVERYTHING_TOKEN', description: 'The access token', is_required: true, is_secret: true },
      ],
    },
  ],
};

async function connect(server) {
  const client = new Client({ name: 'toolport-it-registry', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  return client;
}

const health = async (server) => JSON.stringify(await (await fetch(`${server.base}/health`)).json());

function config(registryUrl, upstreams) {
  return `# written by registry.test.mjs
registry:
  url: ${JSON.stringify(registryUrl)}
upstreams:
${upstreams}
log: {level: info}
`;
}

const everythingUpstream = (name = 'everything', registryName = EVERYTHING_NAME) => `  ${name}:
    registry: ${JSON.stringify(registryName)}
    cwd: ${JSON.stringify(HERE)}
    env: {npm_config_offline: "true", npm_config_update_notifier: "false"}
`;

const keptFiles = (stateHome) => {
  const dir = path.join(stateHome, 'toolport', 'registry');
  return readdirSync(dir).map((file) => JSON.parse(readFileSync(path.join(dir, file), 'utf8')));
};

describe('registry upstreams', () => {
  let registry;
  let remote;
  let stateHome;

  before(async () => {
    remote = await startHttpServer({ packs: 'conformance' });
    registry = await startRegistryFixture();
    registry.publish(everythingEntry);
    registry.publish(remoteEntry('1.0.0', remote.url));
    registry.publish(secretEntry);
    stateHome = mkdtempSync(path.join(os.tmpdir(), 'toolport-registry-state-'));
  });

  after(async () => {
    await Promise.all([remote?.stop(), registry?.close()]);
    if (stateHome) rmSync(stateHome, { recursive: true, force: true });
  });

  it('resolves latest, runs the npm package through npx and the remote, and pins latest', async (t) => {
    const server = await startHttpServer({
      packs: '',
      config: config(registry.url, `${everythingUpstream()}  conformance:
    registry: ${JSON.stringify(REMOTE_NAME)}
    version: latest
`),
      env: { PATH, XDG_STATE_HOME: stateHome },
    });
    t.after(() => server.stop());
    const client = await connect(server);
    t.after(() => client.close());
    await waitFor('both registry upstreams', async () => {
      const { tools } = await client.listTools();
      const names = tools.map((tool) => tool.name);
      return names.includes('echo') && names.includes('test_simple_text') ? names : null;
    }, 40000);
    const echo = await client.callTool({ name: 'echo', arguments: { message: 'from the registry' } });
    assert.match(text(echo), /from the registry/);
    const conformance = await client.callTool({ name: 'test_simple_text', arguments: {} });
    assert.equal(conformance.isError ?? false, false);
    // Asked once each, by URL-encoded name.
    assert.ok(registry.requests.includes(`GET /v0.1/servers/io.github.modelcontextprotocol%2Fserver-everything/versions/latest`));
    assert.ok(registry.requests.includes(`GET /v0.1/servers/io.github.toolport%2Fconformance/versions/latest`));
    assert.match(server.logs(), new RegExp(`registry entry ${EVERYTHING_NAME}@${EVERYTHING_VERSION} \\(latest, resolved [^)]+\\) runs as npm @modelcontextprotocol/server-everything@${EVERYTHING_VERSION}`));
    // latest pinned in the state directory, with the entry as the registry answered it.
    const kept = keptFiles(stateHome);
    const pin = kept.find((k) => k.name === REMOTE_NAME && k.requested === 'latest');
    assert.equal(pin.version, '1.0.0');
    assert.equal(pin.registry, registry.url);
    assert.deepEqual(pin.server, remoteEntry('1.0.0', remote.url));
    assert.equal(pin.official.isLatest, true);
  });

  it('a pinned latest is not asked again; `toolport registry update` moves it, and a reload switches a running server', async (t) => {
    // 1.1.0 is another server (the testing pack: test_sleep), so which one runs shows.
    const remote2 = await startHttpServer({ packs: 'testing', env: { TOOLPORT_TEST_PACK: '1' } });
    t.after(() => remote2.stop());
    registry.publish(remoteEntry('1.1.0', remote2.url));
    const asked = registry.requests.length;
    const upstreams = `  conformance:
    registry: ${JSON.stringify(REMOTE_NAME)}
`;
    const server = await startHttpServer({
      packs: '',
      config: `${config(registry.url, upstreams)}reload: {min_interval_s: 0}\n`,
      env: { XDG_STATE_HOME: stateHome },
    });
    t.after(() => server.stop());
    const client = await connect(server);
    t.after(() => client.close());
    const names = async () => (await client.listTools()).tools.map((tool) => tool.name);
    await waitFor('the pinned remote', async () => ((await names()).includes('test_simple_text') ? true : null), 20000);
    assert.equal(registry.requests.length, asked, 'the pin answered: no request');
    assert.match(server.logs(), new RegExp(`${REMOTE_NAME}@1\\.0\\.0 \\(latest`));

    // A reload with nothing moved changes nothing.
    const idle = await fetch(`${server.base}/admin/reload`, { method: 'POST' });
    assert.equal(idle.status, 202);
    assert.deepEqual((await idle.json()).reloading, ['gateway']);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.doesNotMatch(server.logs(), /moved from/);
    assert.ok((await names()).includes('test_simple_text'));

    const update = await runToolport(['registry', 'update', REMOTE_NAME, '--registry', registry.url], {
      env: { XDG_STATE_HOME: stateHome },
    });
    assert.equal(update.status, 0, update.stderr);
    assert.match(update.stdout, new RegExp(`${REMOTE_NAME}: latest 1\\.0\\.0 -> 1\\.1\\.0 \\(a running server switches`));
    const pin = keptFiles(stateHome).find((k) => k.name === REMOTE_NAME && k.requested === 'latest');
    assert.equal(pin.version, '1.1.0');
    // The running server keeps 1.0.0 until it is told to reload.
    assert.ok((await names()).includes('test_simple_text'));

    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed += 1; });
    const reload = await runToolport(['reload', '--url', server.url]);
    assert.equal(reload.status, 0, reload.stderr);
    await waitFor('the running server on 1.1.0', async () => {
      const now = await names();
      return now.includes('test_sleep') && !now.includes('test_simple_text') ? now : null;
    }, 20000);
    assert.match(server.logs(), new RegExp(`registry entry ${REMOTE_NAME} moved from 1\\.0\\.0 to 1\\.1\\.0`));
    assert.match(server.logs(), new RegExp(`${REMOTE_NAME}@1\\.1\\.0 \\(latest`));
    await waitFor('tools/list_changed', async () => (changed > 0 ? true : null), 5000);
    const slept = await client.callTool({ name: 'test_sleep', arguments: { ms: 1 } });
    assert.equal(slept.isError ?? false, false, JSON.stringify(slept));
    assert.equal(registry.requests.length, asked + 1, 'only the update asked the registry');

    // A new start runs the kept 1.1.0 too.
    const again = await startHttpServer({ packs: '', config: config(registry.url, upstreams), env: { XDG_STATE_HOME: stateHome } });
    t.after(() => again.stop());
    const client2 = await connect(again);
    t.after(() => client2.close());
    await waitFor('the updated remote', async () => ((await client2.listTools()).tools.some((tool) => tool.name === 'test_sleep') ? true : null), 20000);
    assert.match(again.logs(), new RegExp(`${REMOTE_NAME}@1\\.1\\.0 \\(latest`));
    // An update with nothing new says so.
    const still = await runToolport(['registry', 'update', '--registry', registry.url], { env: { XDG_STATE_HOME: stateHome } });
    assert.equal(still.status, 0, still.stderr);
    assert.match(still.stdout, new RegExp(`${REMOTE_NAME}: latest is still 1\\.1\\.0`));
  });

  it('a required environment variable: missing, the upstream fails with a clear error and the rest serves; given, it runs', async (t) => {
    const upstreams = `  secret:
    registry: ${JSON.stringify(SECRET_NAME)}
    version: "0.3.0"
    cwd: ${JSON.stringify(HERE)}
    env: {npm_config_offline: "true"}
  conformance:
    registry: ${JSON.stringify(REMOTE_NAME)}
    version: "1.0.0"
`;
    const missing = await startHttpServer({
      packs: '',
      config: config(registry.url, upstreams),
      env: { PATH, XDG_STATE_HOME: stateHome, EVERYTHING_TOKEN: '' },
    });
    t.after(() => missing.stop());
    const client = await connect(missing);
    t.after(() => client.close());
    await waitFor('the remote', async () => ((await client.listTools()).tools.some((tool) => tool.name === 'test_simple_text') ? true : null), 20000);
    const why = await waitFor('the secret upstream to fail', async () => {
      const h = await health(missing);
      return /EVERYTHING_TOKEN/.test(h) ? h : null;
    }, 20000);
    assert.match(why, /upstream secret: registry entry io\.github\.example\/needs-token@0\.3\.0 requires the environment variable EVERYTHING_TOKEN \(The access token\); give it in upstreams\.secret\.env\.EVERYTHING_TOKEN/);
    assert.match(missing.logs(), /requires the environment variable EVERYTHING_TOKEN/);
    assert.equal((await client.listTools()).tools.some((tool) => tool.name === 'echo'), false);

    const token = 'tok-0123456789abcdef';
    const given = await startHttpServer({
      packs: '',
      config: config(registry.url, upstreams),
      env: { PATH, XDG_STATE_HOME: stateHome, EVERYTHING_TOKEN: token },
    });
    t.after(() => given.stop());
    const client2 = await connect(given);
    t.after(() => client2.close());
    await waitFor('the secret upstream', async () => ((await client2.listTools()).tools.some((tool) => tool.name === 'echo') ? true : null), 40000);
    // server-everything's get-env shows its environment: the token reached it, and the
    // answer has it redacted (a secret of the entry's is never relayed).
    const env = await client2.callTool({ name: 'get-env', arguments: {} });
    assert.doesNotMatch(text(env), new RegExp(token));
    assert.doesNotMatch(given.logs(), new RegExp(token));
  });

  it('the registry down at start-up: the kept entry starts the upstream', async (t) => {
    const own = await startRegistryFixture();
    own.publish(remoteEntry('2.0.0', remote.url));
    const home = mkdtempSync(path.join(os.tmpdir(), 'toolport-registry-down-'));
    t.after(() => rmSync(home, { recursive: true, force: true }));
    const cfg = config(own.url, `  remote:
    registry: ${JSON.stringify(REMOTE_NAME)}
`);
    const first = await startHttpServer({ packs: '', config: cfg, env: { XDG_STATE_HOME: home } });
    const client = await connect(first);
    await waitFor('the remote', async () => ((await client.listTools()).tools.length > 0 ? true : null), 20000);
    await client.close();
    await first.stop();
    await own.close();

    const second = await startHttpServer({ packs: '', config: cfg, env: { XDG_STATE_HOME: home } });
    t.after(() => second.stop());
    const client2 = await connect(second);
    t.after(() => client2.close());
    await waitFor('the remote from the kept entry', async () =>
      ((await client2.listTools()).tools.some((tool) => tool.name === 'test_simple_text') ? true : null), 20000);
    assert.match(second.logs(), new RegExp(`${REMOTE_NAME}@2\\.0\\.0 \\(latest`));

    // Nothing kept and no registry: that upstream waits, as a dead one does; the server serves.
    const fresh = mkdtempSync(path.join(os.tmpdir(), 'toolport-registry-none-'));
    t.after(() => rmSync(fresh, { recursive: true, force: true }));
    const third = await startHttpServer({ packs: 'conformance', config: cfg, env: { XDG_STATE_HOME: fresh } });
    t.after(() => third.stop());
    const why = await waitFor('the unresolved upstream', async () => {
      const h = await health(third);
      return /not resolved/.test(h) ? h : null;
    }, 20000);
    assert.match(why, /registry entry io\.github\.toolport\/conformance@latest not resolved \(and none kept from before\)/);
    const client3 = await connect(third);
    t.after(() => client3.close());
    assert.ok((await client3.listTools()).tools.some((tool) => tool.name === 'test_simple_text'));
  });

  it('a reload while the old entry is still connecting starts over on the new one at once', async (t) => {
    // 1.0.0 names a server that takes connections and never answers: its handshake hangs.
    const silent = createServer(() => {});
    await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve));
    t.after(() => {
      silent.closeAllConnections();
      silent.close();
    });
    const own = await startRegistryFixture();
    t.after(() => own.close());
    own.publish(remoteEntry('1.0.0', `http://127.0.0.1:${silent.address().port}/mcp`));
    const home = mkdtempSync(path.join(os.tmpdir(), 'toolport-registry-hung-'));
    t.after(() => rmSync(home, { recursive: true, force: true }));
    const server = await startHttpServer({
      packs: '',
      config: `${config(own.url, `  remote:
    registry: ${JSON.stringify(REMOTE_NAME)}
    connect_timeout_ms: 60000
`)}reload: {min_interval_s: 0}\n`,
      env: { XDG_STATE_HOME: home },
    });
    t.after(() => server.stop());
    await waitFor('the hung attempt on 1.0.0', async () =>
      (new RegExp(`${REMOTE_NAME}@1\\.0\\.0 \\(latest`).test(server.logs()) ? true : null), 20000);

    own.publish(remoteEntry('1.1.0', remote.url));
    const update = await runToolport(['registry', 'update', REMOTE_NAME, '--registry', own.url], { env: { XDG_STATE_HOME: home } });
    assert.equal(update.status, 0, update.stderr);
    const reload = await runToolport(['reload', '--url', server.url]);
    assert.equal(reload.status, 0, reload.stderr);
    // Well before the hung handshake's 60 s timeout.
    const client = await connect(server);
    t.after(() => client.close());
    await waitFor('1.1.0 connected', async () =>
      ((await client.listTools()).tools.some((tool) => tool.name === 'test_simple_text') ? true : null), 15000);
    assert.match(server.logs(), new RegExp(`registry entry ${REMOTE_NAME} moved from 1\\.0\\.0 to 1\\.1\\.0; reconnecting in 0 ms`));
  });
});

describe('toolport registry search, show, add', () => {
  let registry;
  let stateHome;

  before(async () => {
    registry = await startRegistryFixture();
    registry.publish(everythingEntry);
    registry.publish(remoteEntry('1.0.0', 'http://127.0.0.1:9/mcp'));
    registry.publish(secretEntry);
    registry.publish(remoteEntry('1.1.0', 'http://127.0.0.1:9/mcp'));
    stateHome = mkdtempSync(path.join(os.tmpdir(), 'toolport-registry-cli-'));
  });

  after(async () => {
    await registry?.close();
    if (stateHome) rmSync(stateHome, { recursive: true, force: true });
  });

  const cli = (args) => runToolport(['registry', ...args, '--registry', registry.url], { env: { XDG_STATE_HOME: stateHome } });

  it('search pages with the cursor, filters by text and updated_since', async () => {
    const first = await cli(['search', '--limit', '2']);
    assert.equal(first.status, 0, first.stderr);
    const rows = first.stdout.trim().split('\n');
    assert.equal(rows.length, 3, first.stdout);  // two entries and the cursor line
    assert.match(rows[0], /^io\.github\.example\/needs-token\s+0\.3\.0\s+active/);
    assert.match(rows[1], /^io\.github\.modelcontextprotocol\/server-everything/);
    const cursor = rows[2].match(/^more: --cursor (\S+)$/)[1];
    assert.ok(registry.requests.includes('GET /v0.1/servers?limit=2&version=latest'));
    const second = await cli(['search', '--limit', '2', '--cursor', cursor]);
    assert.equal(second.status, 0, second.stderr);
    assert.equal(second.stdout.trim().split('\n').length, 1);
    assert.match(second.stdout, /^io\.github\.toolport\/conformance\s+1\.1\.0\s+active/);  // latest only
    const all = await cli(['search', '--limit', '1', '--all', '--all-versions']);
    assert.equal(all.stdout.trim().split('\n').length, 4, all.stdout);
    const found = await cli(['search', 'needs', '--json']);
    assert.deepEqual(JSON.parse(found.stdout).servers.map((s) => s.server.name), [SECRET_NAME]);
    // updated_since: only what was published after the third entry.
    const late = await cli(['search', '--updated-since', '2026-01-01T00:03:30Z', '--all-versions']);
    assert.deepEqual(late.stdout.trim().split('\n').map((line) => line.split(/\s+/).slice(0, 2).join(' ')), [`${REMOTE_NAME} 1.1.0`]);
  });

  it('show prints the entry and what it requires; an unknown name fails clearly', async () => {
    const shown = await cli(['show', SECRET_NAME]);
    assert.equal(shown.status, 0, shown.stderr);
    assert.match(shown.stdout, /package: npm @modelcontextprotocol\/server-everything@\S+ \(stdio\)/);
    assert.match(shown.stdout, /env EVERYTHING_TOKEN \(required\) \(secret\): The access token/);
    const versions = await cli(['show', REMOTE_NAME, '--versions']);
    assert.match(versions.stdout, /^1\.1\.0\s+active\s+\S+\s+latest\n1\.0\.0\s+active/);
    const old = await cli(['show', REMOTE_NAME, '--version', '1.0.0', '--json']);
    assert.equal(JSON.parse(old.stdout)._meta['io.modelcontextprotocol.registry/official'].isLatest, false);
    const unknown = await cli(['show', 'io.github.nobody/nothing']);
    assert.equal(unknown.status, 1);
    assert.match(unknown.stderr, /has no server io\.github\.nobody\/nothing version latest/);
  });

  it('add writes the upstream into the file, comments kept, and refuses a second one of that name', async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolport-registry-add-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'toolport.yaml');
    const original = `# Toolport for the team
server:
  name: team-gateway   # shown to clients

upstreams:
  # the reference server
  files:
    command: npx
    args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]

# the gateway's naming
gateway: {prefix_mode: conditional}
`;
    writeFileSync(file, original);
    const added = await cli(['add', SECRET_NAME, '--version', '0.3.0', '--config', file]);
    assert.equal(added.status, 0, added.stderr);
    assert.match(added.stdout, /added upstream needs-token/);
    const edited = readFileSync(file, 'utf8');
    assert.equal(
      edited,
      original.replace(
        '"/tmp"]\n',
        `"/tmp"]\n  needs-token:\n    registry: "${SECRET_NAME}"\n    version: "0.3.0"\n` +
          `    # required: env: {EVERYTHING_TOKEN: ...} (a secret: from Toolport's environment, or as "\${VAR}") - The access token\n`,
      ),
    );
    const check = await runToolport(['config', 'check', file]);
    assert.equal(check.status, 0, check.stderr + check.stdout);
    // Kept: the server's first start needs no registry.
    assert.ok(keptFiles(stateHome).some((k) => k.name === SECRET_NAME && k.version === '0.3.0'));
    const again = await cli(['add', SECRET_NAME, '--config', file]);
    assert.equal(again.status, 1);
    assert.match(again.stderr, /upstreams: already has an entry named "needs-token"/);
    assert.equal(readFileSync(file, 'utf8'), edited);
  });
});
