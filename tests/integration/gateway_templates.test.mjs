// The gateway and RFC 6570 resource templates, in the real binary: three fault-injecting
// fixtures (tests/fixtures/upstream) serve templates with operators ({+path}, {?q,limit},
// {/path*}); alpha and beta serve the same ones (so the gateway prefixes them), gamma its
// own (served as they are). Driven by the official TypeScript SDK client: reads routed by
// matching the templates, and notifications/resources/updated of templated URIs sent under
// the form the client subscribed to, which depends on the template the URI matches, not on
// whether the upstream has some prefixed template.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startHttpServer, waitFor, sleep } from './lib/harness.mjs';
import { FAULTY_SERVER } from '../fixtures/upstream/faulty_server.mjs';

const NODE = process.execPath;
const yamlString = (s) => JSON.stringify(s);
const textOf = (read) => read.contents.map((c) => c.text ?? '').join('');

function upstream(name, scheme) {
  return `  ${name}:
    command: ${yamlString(NODE)}
    args: [${yamlString(FAULTY_SERVER)}, stdio, --name, ${name}, --operator-templates, ${scheme}]
`;
}

describe('gateway: resource templates with RFC 6570 operators', () => {
  let server;
  let client;
  const updates = [];

  before(async () => {
    server = await startHttpServer({
      packs: '',
      config: `upstreams:\n${upstream('alpha', 'tpl')}${upstream('beta', 'tpl')}${upstream('gamma', 'solo')}`,
    });
    client = new Client({ name: 'toolport-it-gateway-templates', version: '1.0.0' }, { capabilities: {} });
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`)));
    await waitFor('every upstream listed', async () => {
      const { resourceTemplates } = await client.listResourceTemplates();
      const patterns = resourceTemplates.map((t) => t.uriTemplate);
      return ['alpha', 'beta', 'gamma'].every((u) => patterns.includes(`${u}+faulty://item/{id}`)) &&
        patterns.includes('solo://files/{+path}');
    });
  });

  after(async () => {
    await client?.close();
    await server?.stop();
  });

  it('lists the operator templates, prefixed only where two upstreams share a pattern', async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    const patterns = resourceTemplates.map((t) => t.uriTemplate);
    for (const p of [
      'alpha+tpl://files/{+path}', 'beta+tpl://files/{+path}', 'alpha+tpl://search{?q,limit}', 'beta+tpl://search{?q,limit}',
      'alpha+tpl://repo/{owner}/{repo}{/path*}', 'solo://files/{+path}', 'solo://search{?q,limit}',
      'solo://repo/{owner}/{repo}{/path*}',
    ]) {
      assert.ok(patterns.includes(p), `${p} in ${patterns.join(' ')}`);
    }
    assert.ok(!patterns.includes('tpl://files/{+path}') && !patterns.includes('gamma+solo://files/{+path}'));
  });

  it('reads through templates served as they are: {+path}, {?q,limit} in any order, {/path*}', async () => {
    assert.equal(textOf(await client.readResource({ uri: 'solo://files/docs/read%20me.md' })), 'gamma file docs/read me.md');
    assert.equal(textOf(await client.readResource({ uri: 'solo://search?limit=5&q=caf%C3%A9' })), 'gamma search q=café limit=5');
    assert.equal(textOf(await client.readResource({ uri: 'solo://search?q=x' })), 'gamma search q=x limit=(none)');
    assert.equal(textOf(await client.readResource({ uri: 'solo://search' })), 'gamma search q=(none) limit=(none)');
    assert.equal(textOf(await client.readResource({ uri: 'solo://repo/octo/hello/src/main.c' })), 'gamma repo octo/hello path src|main.c');
    assert.equal(textOf(await client.readResource({ uri: 'solo://repo/octo/hello' })), 'gamma repo octo/hello path ');
  });

  it('reads through prefixed templates, each from its own upstream', async () => {
    assert.equal(textOf(await client.readResource({ uri: 'alpha+tpl://files/a/b.txt' })), 'alpha file a/b.txt');
    assert.equal(textOf(await client.readResource({ uri: 'beta+tpl://files/a/b.txt' })), 'beta file a/b.txt');
    assert.equal(textOf(await client.readResource({ uri: 'beta+tpl://search?q=x&limit=2' })), 'beta search q=x limit=2');
    assert.equal(textOf(await client.readResource({ uri: 'alpha+tpl://repo/o/r/x' })), 'alpha repo o/r path x');
  });

  it('answers resource not found for URIs no template matches', async () => {
    for (const uri of ['tpl://files/a', 'solo://repo/octo', 'solo://files/', 'solo://search#frag', 'gamma+solo://files/a']) {
      await assert.rejects(client.readResource({ uri }), (e) => {
        assert.ok([-32002, -32602].includes(e.code), `${uri}: ${e.code} ${e.message}`);
        return true;
      });
    }
  });

  it('sends resources/updated of a templated URI under the form its matching template is served as', async () => {
    // gamma has a prefixed template (faulty://item/{id}, shared with the others) and its own
    // unprefixed ones: each URI gets the form of the template it matches.
    await client.subscribeResource({ uri: 'solo://files/watched.txt' });
    await client.subscribeResource({ uri: 'gamma+faulty://item/7' });
    await client.subscribeResource({ uri: 'alpha+tpl://search?q=news' });
    // The gateway subscribes upstream in the background: touch until the upstream has it.
    const touched = (tool, uri) => waitFor(`${tool} ${uri}`, async () => {
      const result = await client.callTool({ name: tool, arguments: { uri } });
      return /: 1 subscribed session/.test(result.content[0].text);
    });
    await touched('gamma_touch', 'solo://files/watched.txt');
    await touched('gamma_touch', 'faulty://item/7');
    await touched('touch', 'tpl://search?q=news');  // alpha, configured first, keeps the name
    await waitFor('three updates', () => updates.length >= 3);
    await sleep(100);  // nothing else, e.g. a wrongly prefixed duplicate, follows
    assert.deepEqual([...updates].sort(), ['alpha+tpl://search?q=news', 'gamma+faulty://item/7', 'solo://files/watched.txt']);
  });
});
