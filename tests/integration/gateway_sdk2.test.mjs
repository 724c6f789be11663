// The gateway driven by the official TypeScript SDK 2.x client (@modelcontextprotocol/client;
// gateway.test.mjs drives it with 1.x). One gateway fronts three stdio upstreams: a second
// toolport on --packs conformance (`conf`), the official server-everything (`everything`),
// and one more conformance toolport (`mirror`) whose allow list keeps only
// test_simple_text and test_simple_prompt, so that those names collide with conf's (conf,
// configured first, keeps them; mirror's are prefixed).
//
// Every scenario runs on each wire the 2.x client can speak to the gateway:
//   - Streamable HTTP with a 2025-11-25 session (the client's default, versionNegotiation
//     'legacy': initialize, Mcp-Session-Id, server requests on the streams);
//   - Streamable HTTP in the stateless revision 2026-07-28, which the 2.x client chooses with
//     versionNegotiation {mode: 'auto'}: it probes server/discover, then sends every request
//     with the _meta envelope and no session; the upstreams' sampling and elicitation
//     requests reach it as input_required results it answers and retries, list_changed on a
//     subscriptions/listen stream;
//   - the 2024-11-05 HTTP+SSE transport (GET /sse + POST /messages) with 2.x's
//     SSEClientTransport.
// Last, token-selected profiles and 2026-07-28 cache hints.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  Client,
  StreamableHTTPClientTransport,
  SSEClientTransport,
  InMemoryResponseCacheStore,
  ProtocolError,
} from '@modelcontextprotocol/client';
import { startHttpServer, waitFor, instrumentTransport, TOOLPORT_BIN } from './lib/harness.mjs';
import { NODE, EVERYTHING, NAME, yamlString, text, code } from './lib/gateway_setup.mjs';

// An upstream's settings for a toolport on --packs conformance over stdio, for a YAML
// mapping indented 4 spaces.
const CONFORMANCE_UPSTREAM = `command: ${yamlString(TOOLPORT_BIN)}
    args: [serve, --stdio, --packs, conformance]`;

const WIRES = [
  { name: 'Streamable HTTP, a 2025-11-25 session', era: 'legacy', version: '2025-11-25', options: {} },
  {
    name: 'Streamable HTTP, stateless 2026-07-28',
    era: 'modern',
    version: '2026-07-28',
    options: { versionNegotiation: { mode: 'auto' } },
  },
  { name: 'HTTP+SSE (2024-11-05 transport)', era: 'legacy', version: '2025-11-25', options: {}, sse: true },
];

// A 2.x client on `wire` that declares sampling and elicitation and answers them: the model
// says "sampled: <last message>"; the user accepts with {response: "yes"}, or declines when
// the message says "decline me". What it was asked, and the list_changed it heard, are kept.
async function connect(server, wire, { headers, responseCacheStore, cachePartition } = {}) {
  const client = new Client(
    { name: 'toolport-it-gateway-sdk2', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: {} }, responseCacheStore, cachePartition, ...wire.options },
  );
  const asked = [];
  const changes = [];
  const errors = [];
  client.onerror = (e) => errors.push(e);
  client.setRequestHandler('sampling/createMessage', async (request) => {
    asked.push(request);
    const last = request.params.messages.at(-1).content;
    return { role: 'assistant', model: 'test-model', content: { type: 'text', text: `sampled: ${last.text}` } };
  });
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request);
    if (request.params.message === 'decline me') return { action: 'decline' };
    return { action: 'accept', content: { response: 'yes' } };
  });
  client.setNotificationHandler('notifications/tools/list_changed', () => changes.push(Date.now()));
  const requestInit = headers ? { headers } : undefined;
  const transport = wire.sse
    ? new SSEClientTransport(new URL(`${server.base}/sse`), { requestInit })
    : new StreamableHTTPClientTransport(new URL(server.url), { requestInit });
  await client.connect(transport);
  const onWire = instrumentTransport(transport);
  return { client, transport, onWire, asked, changes, errors };
}

// The tool list as the gateway serves it now (a 2026-07-28 list may be cached for its ttlMs).
const listTools = async (client) => (await client.listTools({}, { cacheMode: 'refresh' })).tools;

// Successful calls the gateway counted for an upstream (its service), from /metrics.
async function successes(server, service) {
  const metrics = await (await fetch(`${server.base}/metrics`)).text();
  const m = metrics.match(new RegExp(`toolport_service_calls_total\\{outcome="success",service="${service}"\\} (\\d+)`));
  return m ? Number(m[1]) : 0;
}

describe('gateway with the SDK 2.x client: a conformance toolport and server-everything over stdio', () => {
  let server;

  before(async () => {
    server = await startHttpServer({
      packs: '',
      config: `
upstreams:
  conf:
    ${CONFORMANCE_UPSTREAM}
  everything:
    command: ${yamlString(NODE)}
    args: [${yamlString(EVERYTHING)}, stdio]
  mirror:
    ${CONFORMANCE_UPSTREAM}
    allow: [test_simple_text, test_simple_prompt]
# Every call reaches its upstream (read-only tools' results would be cached across wires).
pipeline:
  cache: {enabled: false}
`,
    });
  });

  after(async () => {
    await server?.stop();
  });

  for (const wire of WIRES) {
    describe(wire.name, () => {
      let session;

      before(async () => {
        session = await connect(server, wire);
        // The upstreams start beside the gateway: wait until all three are listed.
        await waitFor('every upstream listed', async () => {
          const names = (await listTools(session.client)).map((t) => t.name);
          return names.includes('get-sum') && names.includes('test_simple_text') && names.includes('mirror_test_simple_text');
        });
      });

      after(async () => {
        await session?.client.close();
      });

      it('connects on this wire', () => {
        assert.equal(session.client.getProtocolEra(), wire.era);
        assert.equal(session.client.getNegotiatedProtocolVersion(), wire.version);
        if (wire.sse) return;
        if (wire.era === 'modern') assert.equal(session.transport.sessionId, undefined, 'the stateless revision has no session');
        else assert.match(session.transport.sessionId, /^[0-9a-f]{16,}$/);
      });

      it('lists every upstream tool once under a safe name, prefixed only where names collide', async () => {
        const tools = await listTools(session.client);
        const names = tools.map((t) => t.name);
        for (const name of names) assert.match(name, NAME);
        assert.equal(new Set(names).size, names.length, 'each name once');
        // test_simple_text is conf's and mirror's: conf, configured first, keeps the name, and
        // mirror's gets its prefix (what mirror lists never renames conf's tools).
        assert.ok(names.includes('test_simple_text') && names.includes('mirror_test_simple_text'), names.join(' '));
        assert.ok(!names.includes('conf_test_simple_text'));
        // Names only one upstream has keep them; mirror serves only what its allow list keeps.
        for (const n of ['get-sum', 'echo', 'trigger-sampling-request', 'test_tool_with_progress', 'test_sampling', 'test_error_handling']) {
          assert.ok(names.includes(n), `${n} in ${names.join(' ')}`);
        }
        assert.deepEqual(names.filter((n) => n.startsWith('conf_')), []);
        assert.deepEqual(names.filter((n) => n.startsWith('mirror_')), ['mirror_test_simple_text']);
        // The upstreams' schemas are served as they are.
        const sum = tools.find((t) => t.name === 'get-sum');
        assert.ok(sum.inputSchema.properties.a && sum.inputSchema.properties.b);
        assert.deepEqual(tools.find((t) => t.name === 'test_sampling').inputSchema.required, ['prompt']);

        const prompts = (await session.client.listPrompts()).prompts.map((p) => p.name);
        for (const n of ['test_simple_prompt', 'mirror_test_simple_prompt', 'test_prompt_with_arguments', 'args-prompt']) {
          assert.ok(prompts.includes(n), `${n} in ${prompts.join(' ')}`);
        }
        assert.ok(!prompts.includes('conf_test_simple_prompt'));
        // Resources are kept unless two upstreams list the same URI: then each gets its
        // prefix as a scheme prefix (the allow list is for tools and prompts only).
        const uris = (await session.client.listResources()).resources.map((r) => r.uri);
        assert.ok(uris.includes('conf+test://static-text') && uris.includes('mirror+test://static-text'), uris.join(' '));
        assert.ok(!uris.includes('test://static-text'));
        assert.ok(uris.includes('demo://resource/static/document/features.md'), uris.join(' '));
        const templates = (await session.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
        assert.ok(templates.includes('conf+test://template/{id}/data') && templates.includes('demo://resource/dynamic/text/{resourceId}'),
          templates.join(' '));
      });

      it('calls tools through, the kept and the prefixed name each to its own upstream', async () => {
        const sum = await session.client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } });
        assert.equal(sum.isError ?? false, false);
        assert.match(text(sum), /\b42\b/);
        assert.equal(typeof sum._meta.duration_ms, 'number', 'the gateway accounts for the call');

        const [conf, mirror] = [await successes(server, 'conf'), await successes(server, 'mirror')];
        const viaMirror = await session.client.callTool({ name: 'mirror_test_simple_text', arguments: {} });
        assert.equal(text(viaMirror), 'This is a simple text response for testing.');
        assert.equal(await successes(server, 'mirror'), mirror + 1, 'mirror_test_simple_text went to mirror');
        assert.equal(await successes(server, 'conf'), conf, 'and not to conf');
        const viaConf = await session.client.callTool({ name: 'test_simple_text', arguments: {} });
        assert.equal(text(viaConf), 'This is a simple text response for testing.');
        assert.equal(await successes(server, 'conf'), conf + 1, 'test_simple_text went to conf');

        const image = await session.client.callTool({ name: 'test_image_content', arguments: {} });
        assert.equal(image.content.length, 1);
        assert.equal(image.content[0].type, 'image');
        assert.equal(image.content[0].mimeType, 'image/png');
        assert.match(image.content[0].data, /^iVBORw0KGgo/);
      });

      it('reads resources and templated resources, prefixed or not', async () => {
        const hello = await session.client.readResource({ uri: 'conf+test://static-text' });
        assert.equal(hello.contents[0].text, 'This is the content of the static text resource.');
        assert.equal(hello.contents[0].uri, 'conf+test://static-text', 'contents carry the URI the client read');
        const features = await session.client.readResource({ uri: 'demo://resource/static/document/features.md' });
        assert.match(features.contents[0].text, /^# Everything Server - Features/);

        const item = await session.client.readResource({ uri: 'conf+test://template/42/data' });
        assert.equal(item.contents[0].uri, 'conf+test://template/42/data');
        assert.equal(item.contents[0].mimeType, 'application/json');
        assert.deepEqual(JSON.parse(item.contents[0].text), { id: '42', templateTest: true, data: 'Data for ID: 42' });
        const other = await session.client.readResource({ uri: 'mirror+test://template/7/data' });
        assert.equal(JSON.parse(other.contents[0].text).id, '7');
        const dynamic = await session.client.readResource({ uri: 'demo://resource/dynamic/text/3' });
        assert.match(dynamic.contents[0].text, /^Resource 3: /);

        await assert.rejects(session.client.readResource({ uri: 'test://static-text' }), (e) => {
          assert.ok(e instanceof ProtocolError, String(e));
          assert.match(e.message, /Resource not found/);
          return true;
        });
      });

      it('gets prompts with their arguments', async () => {
        const withArgs = await session.client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'one', arg2: 'two' } });
        assert.deepEqual(withArgs.messages, [
          { role: 'user', content: { type: 'text', text: "Prompt with arguments: arg1='one', arg2='two'" } },
        ]);
        const prefixed = await session.client.getPrompt({ name: 'mirror_test_simple_prompt' });
        assert.equal(prefixed.messages[0].content.text, 'This is a simple prompt for testing.');
        const everything = await session.client.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris' } });
        assert.equal(everything.messages[0].content.text, "What's weather in Paris?");
        const kept = await session.client.getPrompt({ name: 'test_simple_prompt' });
        assert.equal(kept.messages[0].content.text, 'This is a simple prompt for testing.');
        await assert.rejects(session.client.getPrompt({ name: 'conf_test_simple_prompt' }), ProtocolError);
      });

      it('forwards the progress notifications of a call, before its result', async () => {
        const progress = [];
        session.onWire.sent.length = 0;
        session.onWire.received.length = 0;
        const result = await session.client.callTool({ name: 'test_tool_with_progress', arguments: {} }, {
          onprogress: (p) => progress.push(p),
        });
        assert.equal(result.isError ?? false, false);
        assert.deepEqual(progress.map((p) => [p.progress, p.total]), [[0, 100], [50, 100], [100, 100]]);
        assert.equal(progress[1].message, 'Completed step 50 of 100');
        const call = session.onWire.sent.find((m) => m.method === 'tools/call');
        const token = call.params._meta.progressToken;
        const responseAt = session.onWire.received.findIndex((m) => m.id === call.id && 'result' in m);
        const notes = session.onWire.received
          .map((m, i) => ({ m, i }))
          .filter(({ m }) => m.method === 'notifications/progress' && m.params.progressToken === token);
        assert.equal(notes.length, 3, 'with the client\'s own progress token');
        assert.ok(notes.every(({ i }) => i < responseAt));

        // server-everything's too (3 steps of 50 ms).
        const steps = [];
        await session.client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.15, steps: 3 } }, {
          onprogress: (p) => steps.push(p.progress),
        });
        assert.deepEqual(steps, [1, 2, 3]);
      });

      it('announces tools/list_changed when an upstream adds or removes a tool', async () => {
        // 2026-07-28 has no GET stream: change notifications come on a subscriptions/listen stream.
        const subscription = wire.era === 'modern' ? await session.client.listen({ toolsListChanged: true }) : null;
        try {
          if (subscription) assert.equal(subscription.honoredFilter.toolsListChanged, true);
          for (const present of [true, false]) {
            const heard = session.changes.length;
            const mutated = await session.client.callTool({ name: 'test_trigger_tool_change', arguments: {} });
            assert.equal(text(mutated), 'Mutation triggered');
            await waitFor('tools/list_changed', () => session.changes.length > heard, 5000);
            // The client's own listTools(): a 2026-07-28 list cached for its ttlMs is dropped
            // by the notification.
            const names = (await session.client.listTools()).tools.map((t) => t.name);
            assert.equal(names.includes('test_dynamic_tool'), present, names.join(' '));
            if (present) {
              const dynamic = await session.client.callTool({ name: 'test_dynamic_tool', arguments: {} });
              assert.equal(text(dynamic), 'dynamic tool');
            }
          }
        } finally {
          await subscription?.close();
        }
      });

      it('answers the sampling and elicitation requests of upstream tools', async () => {
        session.asked.length = 0;
        session.onWire.sent.length = 0;
        session.onWire.received.length = 0;
        const sampled = await session.client.callTool({ name: 'test_sampling', arguments: { prompt: 'What is 6 x 7?' } });
        assert.equal(text(sampled), 'LLM response: sampled: What is 6 x 7?');
        assert.equal(session.asked.length, 1);
        assert.equal(session.asked[0].method, 'sampling/createMessage');
        assert.equal(session.asked[0].params.maxTokens, 100);
        // How the question travelled: a request of the server's in a session; in the
        // stateless revision an input_required result, and the call again with the answer.
        if (wire.era === 'modern') {
          const calls = session.onWire.sent.filter((m) => m.method === 'tools/call');
          assert.equal(calls.length, 2);
          const first = session.onWire.received.find((m) => m.id === calls[0].id);
          assert.equal(first.result.resultType, 'input_required');
          const [key, question] = Object.entries(first.result.inputRequests)[0];
          assert.equal(question.method, 'sampling/createMessage');
          assert.equal(calls[1].params.inputResponses[key].content.text, 'sampled: What is 6 x 7?');
          assert.equal(calls[1].params.requestState, first.result.requestState);
        } else {
          assert.ok(session.onWire.received.some((m) => m.method === 'sampling/createMessage' && m.id !== undefined));
        }

        const accepted = await session.client.callTool({ name: 'test_elicitation', arguments: { message: 'Proceed?' } });
        assert.equal(text(accepted), 'User response: action=accept, content={"response":"yes"}');
        const question = session.asked.at(-1);
        assert.equal(question.params.message, 'Proceed?');
        assert.deepEqual(question.params.requestedSchema.required, ['response']);
        const declined = await session.client.callTool({ name: 'test_elicitation', arguments: { message: 'decline me' } });
        assert.equal(text(declined), 'User response: action=decline, content={}');

        // server-everything's (another SDK's) requests too.
        const everything = await session.client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hey', maxTokens: 10 } });
        assert.match(text(everything), /sampled: Resource trigger-sampling-request context: hey/);
        assert.equal(session.asked.at(-1).params.systemPrompt, 'You are a helpful test server.');
      });

      it('returns a failing upstream tool, and arguments the upstream schema refuses, as structured errors', async () => {
        const failed = await session.client.callTool({ name: 'test_error_handling', arguments: {} });
        assert.equal(failed.isError, true);
        assert.equal(code(failed), 'INTERNAL_ERROR');
        assert.equal(failed.structuredContent.error, 'This tool intentionally returns an error for testing');
        assert.equal(failed.structuredContent.recoverable, false);
        assert.equal(failed.structuredContent.transient, false);
        assert.match(text(failed), /^INTERNAL_ERROR: This tool intentionally returns an error for testing/);

        // get-sum's schema (server-everything's) is checked at the gateway.
        const refused = await session.client.callTool({ name: 'get-sum', arguments: { a: 'two', b: 40 } });
        assert.equal(refused.isError, true);
        assert.equal(code(refused), 'INVALID_ARGUMENT');
        assert.equal(refused.structuredContent.parameter, 'a');
        assert.equal(refused.structuredContent.expected_format, 'number');
        assert.equal(refused.structuredContent.recoverable, true);

        // A name nobody serves (conf keeps test_simple_text unprefixed) is a JSON-RPC error.
        await assert.rejects(session.client.callTool({ name: 'conf_test_simple_text', arguments: {} }), (e) => {
          assert.ok(e instanceof ProtocolError, String(e));
          assert.equal(e.code, -32602);
          assert.match(e.message, /Unknown tool: conf_test_simple_text/);
          return true;
        });
      });

      it('left the client no transport error', () => {
        // Closing a subscriptions/listen stream, 2.4.0 also POSTs notifications/cancelled,
        // which 2026-07-28 defines for stdio only (over HTTP, closing the stream cancels):
        // the server accepts and drops it (202) rather than refusing it.
        assert.deepEqual(session.errors.map(String), []);
      });
    });
  }
});

describe('gateway with the SDK 2.x client: a profile selected by token on the stateless wire', () => {
  const tokens = { TP_SDK2_SMALL: 'small-sdk2-secret-4d1', TP_SDK2_ADMIN: 'admin-sdk2-secret-9b2' };
  const modern = WIRES.find((w) => w.era === 'modern');

  // The same request (tools/list at /mcp) answers differently for each token, so the answer
  // is not "public" in the SEP-2549 sense: a cache shared across authorization contexts
  // (documented for the 2.x client's responseCacheStore, and for gateways and proxies)
  // would serve one token's catalogue to another.
  it('marks the token\'s tool list private, so a shared cache never serves another token\'s', async (t) => {
    const server = await startHttpServer({
      packs: '',
      env: tokens,
      config: `
http: {bearer_tokens_env: TP_SDK2_ADMIN}
upstreams:
  conf:
    ${CONFORMANCE_UPSTREAM}
gateway:
  profiles:
    small: {tools: ["test_simple_text"], token_env: TP_SDK2_SMALL}
`,
    });
    t.after(() => server.stop());
    const responseCacheStore = new InMemoryResponseCacheStore();
    const admin = await connect(server, modern, {
      headers: { Authorization: `Bearer ${tokens.TP_SDK2_ADMIN}` }, responseCacheStore, cachePartition: 'admin',
    });
    t.after(() => admin.client.close());
    await waitFor('the upstream', async () => (await listTools(admin.client)).length > 1);
    assert.ok((await admin.client.listTools()).tools.length > 1);

    const small = await connect(server, modern, {
      headers: { Authorization: `Bearer ${tokens.TP_SDK2_SMALL}` }, responseCacheStore, cachePartition: 'small',
    });
    t.after(() => small.client.close());
    const fresh = await small.client.listTools({}, { cacheMode: 'bypass' });
    assert.deepEqual(fresh.tools.map((x) => x.name), ['test_simple_text']);
    assert.equal(fresh.cacheScope, 'private', 'a list that depends on the token');
    // What the small token's client gets from the shared store is its own profile's list.
    assert.deepEqual((await small.client.listTools()).tools.map((x) => x.name), ['test_simple_text']);
  });
});
