// Views (gateway profiles) and OAuth scopes cover every primitive, not only tools. One
// gateway fronts two conformance toolports over stdio, `lane` and `other`: both list the same
// resources, templates and prompts, each served under its upstream's prefix (prefix_mode:
// always; lane+test://static-text, other_test_simple_prompt, ...). A client in lane's lane — a
// profile token of `profiles.lane: {upstreams: [lane]}`, or an OAuth token without the
// scope `sources.other.scopes` asks for — lists, reads, gets, completes and subscribes to
// nothing of other's: each hidden entry is answered exactly as one that does not exist, and
// it hears neither other's resources/updated nor a list_changed caused by other alone. An
// operator client (the static token, or a token with the scope) is served both, on the
// Streamable HTTP session wire, in each scenario that needs an upstream subscription.
//
// Every scenario runs for the lane client on Streamable HTTP with a 2025-11-25 session, on
// stateless 2026-07-28 (subscriptions/listen) and on the 2024-11-05 HTTP+SSE transport,
// with the official SDK 2.x client.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport, SSEClientTransport } from '@modelcontextprotocol/client';
import { startHttpServer, waitFor, sleep, TOOLPORT_BIN } from './lib/harness.mjs';
import { yamlString, text } from './lib/gateway_setup.mjs';
import { startAuthServer, makeKey } from './lib/auth_server.mjs';

const CONFORMANCE = `command: ${yamlString(TOOLPORT_BIN)}
    args: [serve, --stdio, --packs, conformance]`;
const UPSTREAMS = `upstreams:
  lane:
    ${CONFORMANCE}
  other:
    ${CONFORMANCE}
pipeline:
  cache: {enabled: false}
`;

const WIRES = [
  { name: 'Streamable HTTP, a 2025-11-25 session', options: {} },
  { name: 'Streamable HTTP, stateless 2026-07-28', options: { versionNegotiation: { mode: 'auto' } }, modern: true },
  { name: 'HTTP+SSE (2024-11-05 transport)', options: {}, sse: true },
];
const SESSION_WIRE = WIRES[0];

// A 2.x client on `wire` with `token`, keeping the resources/updated URIs and the
// list_changed notifications it hears.
async function connect(server, wire, token) {
  const client = new Client({ name: 'toolport-it-views', version: '1.0.0' }, { capabilities: {}, ...wire.options });
  const heard = { updated: [], prompts: 0, resources: 0 };
  client.setNotificationHandler('notifications/resources/updated', (n) => heard.updated.push(n.params.uri));
  client.setNotificationHandler('notifications/prompts/list_changed', () => heard.prompts++);
  client.setNotificationHandler('notifications/resources/list_changed', () => heard.resources++);
  const requestInit = { headers: { Authorization: `Bearer ${token}` } };
  const transport = wire.sse
    ? new SSEClientTransport(new URL(`${server.base}/sse`), { requestInit })
    : new StreamableHTTPClientTransport(new URL(server.url), { requestInit });
  await client.connect(transport);
  return { client, heard };
}

const fresh = { cacheMode: 'refresh' };
const uris = async (c) => (await c.listResources({}, fresh)).resources.map((r) => r.uri);
const templates = async (c) => (await c.listResourceTemplates({}, fresh)).resourceTemplates.map((t) => t.uriTemplate);
const prompts = async (c) => (await c.listPrompts({}, fresh)).prompts.map((p) => p.name);

// The error a request is answered with (it must be refused).
async function refusal(request) {
  try {
    const answer = await request();
    assert.fail(`answered: ${JSON.stringify(answer)}`);
  } catch (e) {
    if (e?.code === 'ERR_ASSERTION') throw e;
    return e;
  }
}

// `hidden` is refused exactly as `missing` (an entry nobody serves): same code, same
// message but for the name.
async function answeredAsMissing(request, hidden, missing) {
  const [h, m] = [await refusal(() => request(hidden)), await refusal(() => request(missing))];
  assert.equal(typeof h.code, 'number', String(h));
  assert.equal(h.code, m.code, `${h.message} | ${m.message}`);
  assert.equal(h.message.replaceAll(hidden, 'NAME'), m.message.replaceAll(missing, 'NAME'));
  return h;
}

// What every lane-only client must get, on any wire; `operator` (on the session wire) sees both.
function laneScenarios(getServer, tokens) {
  for (const wire of WIRES) {
    describe(wire.name, () => {
      let lane, operator;

      before(async () => {
        operator = await connect(getServer(), SESSION_WIRE, tokens.operator);
        await waitFor('both upstreams listed', async () => {
          const names = await prompts(operator.client);
          return names.includes('lane_test_simple_prompt') && names.includes('other_test_simple_prompt');
        });
        lane = await connect(getServer(), wire, tokens.lane);
      });

      after(async () => {
        await lane?.client.close();
        await operator?.client.close();
      });

      it('lists only its lane\'s resources, templates and prompts', async () => {
        const all = await uris(operator.client);
        assert.ok(all.includes('other+test://static-text') && all.includes('lane+test://static-text'), all.join(' '));
        const seen = await uris(lane.client);
        assert.ok(seen.includes('lane+test://static-text'), seen.join(' '));
        assert.deepEqual(seen.filter((u) => u.startsWith('other+')), []);
        const patterns = await templates(lane.client);
        assert.ok(patterns.includes('lane+test://template/{id}/data'), patterns.join(' '));
        assert.deepEqual(patterns.filter((u) => u.startsWith('other+')), []);
        const names = await prompts(lane.client);
        assert.ok(names.includes('lane_test_simple_prompt'), names.join(' '));
        assert.deepEqual(names.filter((n) => n.startsWith('other_')), []);
        const tools = (await lane.client.listTools({}, fresh)).tools.map((t) => t.name);
        assert.deepEqual(tools.filter((n) => n.startsWith('other_')), []);
      });

      it('reads, gets and completes in its lane; outside it each is answered as not found', async () => {
        const read = await lane.client.readResource({ uri: 'lane+test://static-text' }, fresh);
        assert.equal(read.contents[0].text, 'This is the content of the static text resource.');
        const item = await lane.client.readResource({ uri: 'lane+test://template/7/data' }, fresh);
        assert.match(item.contents[0].text, /Data for ID: 7/);
        const readUri = (uri) => lane.client.readResource({ uri }, fresh);
        await answeredAsMissing(readUri, 'other+test://static-text', 'nowhere+test://static-text');
        await answeredAsMissing(readUri, 'other+test://template/7/data', 'nowhere+test://template/7/data');

        const prompt = await lane.client.getPrompt({ name: 'lane_test_simple_prompt' });
        assert.equal(prompt.messages[0].content.text, 'This is a simple prompt for testing.');
        await answeredAsMissing((name) => lane.client.getPrompt({ name }), 'other_test_simple_prompt', 'nowhere_test_simple_prompt');

        const complete = (ref) => lane.client.complete({ ref, argument: { name: 'arg1', value: 'a' } });
        const completed = await complete({ type: 'ref/prompt', name: 'lane_test_prompt_with_arguments' });
        assert.ok(Array.isArray(completed.completion.values));
        await answeredAsMissing((name) => complete({ type: 'ref/prompt', name }),
          'other_test_prompt_with_arguments', 'nowhere_test_prompt_with_arguments');
        await answeredAsMissing((uri) => complete({ type: 'ref/resource', uri }),
          'other+test://template/{id}/data', 'nowhere+test://template/{id}/data');
        // The operator is served other's.
        const theirs = await operator.client.readResource({ uri: 'other+test://static-text' });
        assert.equal(theirs.contents[0].text, 'This is the content of the static text resource.');
      });

      it('subscribes only in its lane and hears no resources/updated of what it cannot see', async () => {
        // The operator's subscriptions make the gateway subscribe upstream to both.
        for (const uri of ['other+test://watched-resource', 'lane+test://watched-resource']) {
          await operator.client.subscribeResource({ uri });
        }
        let subscription = null;
        if (wire.modern) {
          // 2026-07-28: the URIs a listen stream asks for; an unseen one is never delivered.
          subscription = await lane.client.listen({
            resourceSubscriptions: ['other+test://watched-resource', 'lane+test://watched-resource'],
          });
        } else {
          await answeredAsMissing((uri) => lane.client.subscribeResource({ uri }),
            'other+test://watched-resource', 'nowhere+test://watched-resource');
          await lane.client.subscribeResource({ uri: 'lane+test://watched-resource' });
        }
        try {
          operator.heard.updated.length = 0;
          lane.heard.updated.length = 0;
          // The gateway subscribes upstream in the background: trigger until the operator hears it.
          await waitFor('other\'s update reaches the operator', async () => {
            await operator.client.callTool({ name: 'other_test_trigger_resource_update', arguments: {} });
            await sleep(50);
            return operator.heard.updated.includes('other+test://watched-resource');
          });
          await waitFor('lane\'s update reaches the lane client', async () => {
            await operator.client.callTool({ name: 'lane_test_trigger_resource_update', arguments: {} });
            await sleep(50);
            return lane.heard.updated.includes('lane+test://watched-resource');
          });
          assert.deepEqual(lane.heard.updated.filter((u) => u !== 'lane+test://watched-resource'), []);
        } finally {
          await subscription?.close();
        }
      });

      it('hears prompts/list_changed of its lane, not of another upstream', async () => {
        const subscription = wire.modern ? await lane.client.listen({ promptsListChanged: true }) : null;
        const toggled = [];
        try {
          for (const upstream of ['other', 'lane']) {
            const [heardByOperator, heardByLane] = [operator.heard.prompts, lane.heard.prompts];
            const mutated = await operator.client.callTool({ name: `${upstream}_test_trigger_prompt_change`, arguments: {} });
            assert.equal(text(mutated), 'Mutation triggered');
            toggled.push(upstream);
            await waitFor(`${upstream}'s prompts/list_changed at the operator`, () => operator.heard.prompts > heardByOperator);
            if (upstream === 'other') {
              await sleep(200);
              assert.equal(lane.heard.prompts, heardByLane, 'other\'s change is not told to the lane');
            } else {
              await waitFor('lane\'s prompts/list_changed', () => lane.heard.prompts > heardByLane);
            }
          }
          const names = await prompts(lane.client);
          assert.ok(names.includes('lane_test_dynamic_prompt') || names.includes('test_dynamic_prompt'), names.join(' '));
          assert.deepEqual(names.filter((n) => n.startsWith('other_')), []);
        } finally {
          // Put both prompts back as they were, and wait until the gateway has them so.
          for (const upstream of toggled) {
            await operator.client.callTool({ name: `${upstream}_test_trigger_prompt_change`, arguments: {} });
          }
          await waitFor('no dynamic prompt', async () => !(await prompts(operator.client)).some((n) => n.includes('dynamic')));
          await sleep(100);
          await subscription?.close();
        }
      });
    });
  }
}

describe('a gateway profile token is served only its upstreams\' primitives', () => {
  const tokens = { operator: 'views-operator-secret-71c', lane: 'views-lane-secret-2e9' };
  let server;

  before(async () => {
    server = await startHttpServer({
      packs: '',
      env: { TP_VIEWS_OPERATOR: tokens.operator, TP_VIEWS_LANE: tokens.lane },
      config: `http: {bearer_tokens_env: TP_VIEWS_OPERATOR}
gateway:
  prefix_mode: always
  profiles:
    lane: {upstreams: [lane], token_env: TP_VIEWS_LANE}
${UPSTREAMS}`,
    });
  });

  after(async () => {
    await server?.stop();
  });

  laneScenarios(() => server, tokens);
});

describe('an OAuth token without a source\'s scope is served none of its primitives', () => {
  const RS_CLIENT = 'toolport-rs';
  const RS_SECRET = 'rs-secret-views-5a1';
  let as, server;
  const tokens = {};

  before(async () => {
    as = await startAuthServer({ clients: { [RS_CLIENT]: RS_SECRET } });
    as.keys = [makeKey('ec', 'key-1')];
    server = await startHttpServer({
      packs: '',
      env: { TP_INTROSPECTION_SECRET: RS_SECRET },
      config: `auth:
  issuer: ${as.issuer}
  allow_http: true
  scopes_supported: [mcp:tools, other:read]
  required_scopes: [mcp:tools]
  introspection:
    endpoint: ${as.issuer}/introspect
    client_id: ${RS_CLIENT}
    client_secret_env: TP_INTROSPECTION_SECRET
sources:
  other: {scopes: [other:read]}
gateway: {prefix_mode: always}
${UPSTREAMS}`,
    });
    const resource = `http://127.0.0.1:${server.port}/mcp`;
    tokens.operator = as.token({ sub: 'operator', aud: resource, scope: 'mcp:tools other:read' }, { lifetime: 3600 });
    tokens.lane = as.token({ sub: 'alice', aud: resource, scope: 'mcp:tools' }, { lifetime: 3600 });
  });

  after(async () => {
    await server?.stop();
    await as?.stop();
  });

  laneScenarios(() => server, tokens);
});
