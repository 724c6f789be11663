// Fault: a client with a profile token probes what its profile hides. The profile `lane`
// serves only test_sleep (the testing pack's), so the conformance pack's resources, template,
// prompts and completions are outside it. The client reads, subscribes to, gets and
// completes them, and many guessed names besides, over a 2025-11-25 session and stateless
// 2026-07-28 requests, many at once: every answer is the one for a name that exists
// nowhere (same code, same message but for the name), nothing of the hidden entries leaks
// into its lists, and the server recovers (assertRecovered). The operator's token (static,
// sent with every other request) is served them, so they exist.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  startServer,
  takeBaseline,
  assertRecovered,
  assertAnswered,
  send,
  mcpHeaders,
  notify,
  rpc,
  statelessRequest,
  CLIENT_INFO,
  LATEST,
} from './lib.mjs';

const OPERATOR = 'faults-operator-token-8d2';
const LANE = 'faults-lane-token-5b7';
const lane = { Authorization: `Bearer ${LANE}` };

// Hidden entries (they exist: the operator reads them) and how each method names them.
const HIDDEN_URIS = ['test://static-text', 'test://static-binary', 'test://watched-resource', 'test://template/7/data'];
const HIDDEN_PROMPTS = ['test_simple_prompt', 'test_prompt_with_arguments', 'test_prompt_with_image'];
const GUESSES = 60;

// A JSON-RPC request and how to name its target, per probe kind.
const PROBES = {
  read: (name) => ['resources/read', { uri: name }],
  subscribe: (name) => ['resources/subscribe', { uri: name }],
  prompt: (name) => ['prompts/get', { name }],
  completePrompt: (name) => ['completion/complete', { ref: { type: 'ref/prompt', name }, argument: { name: 'arg1', value: 'a' } }],
  completeResource: (name) => ['completion/complete', { ref: { type: 'ref/resource', uri: name }, argument: { name: 'id', value: '1' } }],
};

// The error of one reply with the probed name written as NAME.
function errorOf(res, id, name) {
  assertAnswered(res, `${id} (${name})`);
  const reply = res.messages.find((m) => m.id === id) ?? res.json;
  assert.ok(reply?.error, `${id} (${name}) was answered: ${res.text.slice(0, 300)}`);
  return JSON.parse(JSON.stringify(reply.error).replaceAll(JSON.stringify(name).slice(1, -1), 'NAME'));
}

describe('a profile token probing hidden resources and prompts', () => {
  it('every probe of a hidden or guessed name is answered as not found, and the server recovers', async (t) => {
    const server = await startServer(t, {
      config: `http: {bearer_tokens_env: TP_FAULTS_OPERATOR}
gateway:
  profiles:
    lane: {tools: [test_sleep], token_env: TP_FAULTS_LANE}
`,
      env: { TP_FAULTS_OPERATOR: OPERATOR, TP_FAULTS_LANE: LANE },
      headers: { Authorization: `Bearer ${OPERATOR}` },
    });
    const base = await takeBaseline(server);

    // The operator is served the hidden entries: they exist.
    const operator = await send(server, {
      headers: mcpHeaders(null),
      body: rpc(1, 'initialize', { protocolVersion: LATEST, capabilities: {}, clientInfo: CLIENT_INFO }),
    });
    assert.equal(operator.status, 200, operator.text);
    const operatorSession = { sessionId: operator.headers['mcp-session-id'], version: LATEST };
    await notify(server, operatorSession, 'notifications/initialized');
    const readable = await send(server, { headers: mcpHeaders(operatorSession), body: rpc(2, 'resources/read', { uri: HIDDEN_URIS[0] }) });
    assert.ok(readable.json?.result?.contents?.length, readable.text);

    // The lane's session.
    const init = await send(server, {
      headers: { ...mcpHeaders(null), ...lane },
      body: rpc(1, 'initialize', { protocolVersion: LATEST, capabilities: {}, clientInfo: CLIENT_INFO }),
    });
    assert.equal(init.status, 200, init.text);
    const session = { sessionId: init.headers['mcp-session-id'], version: LATEST };
    const ack = await send(server, { headers: { ...mcpHeaders(session), ...lane }, body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
    assert.equal(ack.status, 202, ack.text);
    let nextId = 10;
    const ask = (method, params, name) => {
      const id = nextId++;
      return send(server, { headers: { ...mcpHeaders(session), ...lane }, body: rpc(id, method, params), timeoutMs: 10000 * server.slow })
        .then((res) => errorOf(res, id, name));
    };

    // What a name nobody serves gets, per probe kind.
    const missing = {};
    for (const [kind, probe] of Object.entries(PROBES)) {
      const name = kind === 'prompt' || kind === 'completePrompt' ? 'nowhere_prompt' : 'nowhere://nothing';
      missing[kind] = await ask(...probe(name), name);
    }

    // Hidden names and guesses, 20 requests at a time.
    const jobs = [];
    for (let i = 0; i < GUESSES; i++) {
      for (const uri of [HIDDEN_URIS[i % HIDDEN_URIS.length], `test://template/${i}/data`, `test://guess-${i}`]) {
        jobs.push(['read', uri], ['subscribe', uri]);
      }
      jobs.push(['completeResource', 'test://template/{id}/data']);
      for (const name of [HIDDEN_PROMPTS[i % HIDDEN_PROMPTS.length], `test_prompt_${i}`]) {
        jobs.push(['prompt', name], ['completePrompt', name]);
      }
    }
    for (let at = 0; at < jobs.length; at += 20) {
      const errors = await Promise.all(jobs.slice(at, at + 20).map(([kind, name]) => ask(...PROBES[kind](name), name).then((e) => [kind, name, e])));
      for (const [kind, name, error] of errors) assert.deepEqual(error, missing[kind], `${kind} ${name}`);
    }

    // Nothing of them in the lane's lists.
    for (const [method, field] of [['resources/list', 'resources'], ['resources/templates/list', 'resourceTemplates'], ['prompts/list', 'prompts']]) {
      const id = nextId++;
      const res = await send(server, { headers: { ...mcpHeaders(session), ...lane }, body: rpc(id, method, {}) });
      assert.deepEqual(res.json?.result?.[field], [], `${method}: ${res.text.slice(0, 300)}`);
    }

    // Stateless 2026-07-28 requests with the lane's token: the same answers.
    for (const uri of HIDDEN_URIS) {
      const { body, headers } = statelessRequest(nextId++, 'resources/read', { uri });
      const res = await send(server, { headers: { ...headers, ...lane }, body });
      const { body: b2, headers: h2 } = statelessRequest(body.id, 'resources/read', { uri: 'nowhere://nothing' });
      const none = await send(server, { headers: { ...h2, ...lane }, body: b2 });
      assert.deepEqual(errorOf(res, body.id, uri), errorOf(none, body.id, 'nowhere://nothing'), uri);
    }

    await send(server, { method: 'DELETE', headers: { ...mcpHeaders(session), ...lane } });
    await send(server, { method: 'DELETE', headers: mcpHeaders(operatorSession) });
    await assertRecovered(server, base, `after ${jobs.length} probes of hidden and guessed names`);
  });
});
